#pragma once
// The autograd graph as data (autograd_graph: its tensors and edges, for any writer of it, the browser page's JSON
// too) and as Graphviz DOT: one node per op (its name, output shape and, after a backward that recorded them, the
// norm of the gradient that flowed through it), one per leaf (parameters by name, inputs), edges from each input to
// the op that read it. Render with `dot -Tsvg graph.dot -o graph.svg` (Debian's graphviz).
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace cppgrad {

// Every tensor that requires grad reached from `root` through the ops' inputs, each once: tensors[0] is the root, the
// rest in the order the walk finds them (breadth first, iterative: graphs can be deep). edges: (input, user) indices
// into tensors, one per input an op read (an input read twice is two edges).
struct AutogradGraph {
  std::vector<Tensor> tensors;
  std::vector<std::pair<int, int>> edges;
};
AutogradGraph autograd_graph(const Tensor& root);

// names: leaves to label (e.g. a model's named_parameters()); other leaves that require grad are "input".
// The graph must still exist: call backward(grad, /*retain_graph=*/true) first (with recorded norms, via
// run_backward(..., /*record_grad_norms=*/true)) or dump before any backward.
void write_graph_dot(const Tensor& root, std::ostream& out, const std::map<const TensorImpl*, std::string>& names = {});

}  // namespace cppgrad
