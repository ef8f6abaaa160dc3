#pragma once
// The autograd graph as JSON for the page's graph tab (core/graph_dot.h's twin, with numbers): one node per tensor of
// the graph (an op's output, or a leaf), its values and the gradient of the root with respect to it.
//
//   {"nodes": [{"id", "label", "op", "shape": [..], "value": [..], "grad": [..]}...], "edges": [[from, to]...]}
//
// op: the op's name ("mul", "tanh", "matmul", ...) or "leaf"; label: the tensor's given name, else the op's (a leaf
// without a name: "input"). value and grad
// hold the first kMaxShown elements in row-major order (grad empty where no gradient reaches). An edge runs from an
// input to the op that read it. Node 0 is the root.
#include <map>
#include <string>

#include "core/tensor.h"

namespace cppgrad::web {

inline constexpr std::size_t kMaxShown = 16;

// root: a one-element tensor whose graph still exists (the gradients are taken here, through autograd::grad, so no
// .grad of the leaves changes). names: labels for any tensors of the graph.
std::string graph_json(const Tensor& root, const std::map<const TensorImpl*, std::string>& names);

// The two graphs the page teaches with.
enum class LessonGraph {
  expression,  // micrograd's neuron: o = tanh(x1*w1 + x2*w2 + b), scalars
  head,        // one causal attention head over 3 tokens of width 4: q, k, v, scores, mask, softmax, weighted sum, loss
};
// "expression" | "head"; another name throws std::invalid_argument naming it.
LessonGraph parse_lesson_graph(const std::string& what);
std::string lesson_graph_json(LessonGraph what);

}  // namespace cppgrad::web
