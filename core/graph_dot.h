#pragma once
// The autograd graph as Graphviz DOT: one node per op (its name, output shape and, after a backward that recorded
// them, the norm of the gradient that flowed through it), one per leaf (parameters by name, inputs), edges from
// each input to the op that read it. Render with `dot -Tsvg graph.dot -o graph.svg` (Debian's graphviz).
#include <map>
#include <ostream>
#include <string>

#include "core/tensor.h"

namespace cppgrad {

// names: leaves to label (e.g. a model's named_parameters()); other leaves that require grad are "input".
// The graph must still exist: call backward(grad, /*retain_graph=*/true) first (with recorded norms, via
// run_backward(..., /*record_grad_norms=*/true)) or dump before any backward.
void write_graph_dot(const Tensor& root, std::ostream& out, const std::map<const TensorImpl*, std::string>& names = {});

}  // namespace cppgrad
