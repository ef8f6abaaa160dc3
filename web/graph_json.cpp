#include "web/graph_json.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "core/autograd.h"
#include "core/graph_dot.h"
#include "core/generator.h"
#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "core/ops/views.h"
#include "nn/attention.h"

namespace cppgrad::web {

namespace {

nlohmann::json first_values(const Tensor& t) {
  nlohmann::json out = nlohmann::json::array();
  if (!t.defined()) return out;
  const std::vector<double> v = t.detach().to(DType::Float64).to_vector<double>();
  for (std::size_t i = 0; i < std::min(v.size(), kMaxShown); ++i) out.push_back(v[i]);
  return out;
}

}  // namespace

std::string graph_json(const Tensor& root, const std::map<const TensorImpl*, std::string>& names) {
  if (root.numel() != 1) throw std::invalid_argument("graph_json: the root must have one element");
  const auto [tensors, edges] = autograd_graph(root);  // root first
  const std::vector<Tensor> grads =
      autograd::grad({root}, tensors, {}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
  nlohmann::json nodes = nlohmann::json::array();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const auto& node = t.grad_fn();
    const auto name = names.find(t.impl_ptr().get());
    const std::string op = node ? node->name : "leaf";
    nodes.push_back({{"id", i},
                     {"label", name != names.end() ? name->second : node ? op : "input"},
                     {"op", op},
                     {"shape", t.shape()},
                     {"value", first_values(t)},
                     {"grad", first_values(grads[i])}});
  }
  nlohmann::json edge_list = nlohmann::json::array();
  for (const auto& [from, to] : edges) edge_list.push_back({from, to});
  return nlohmann::json{{"nodes", nodes}, {"edges", edge_list}}.dump();
}

LessonGraph parse_lesson_graph(const std::string& what) {
  if (what == "expression") return LessonGraph::expression;
  if (what == "head") return LessonGraph::head;
  throw std::invalid_argument("graph: '" + what + "' is not a graph the page draws (expression or head)");
}

namespace {

Tensor leaf(const std::vector<double>& values, const Shape& shape) {
  Tensor t = Tensor::from_vector(values, shape, DType::Float64);
  t.set_requires_grad(true);
  return t;
}

// micrograd's neuron (Karpathy's lesson): x1 = 2, x2 = 0, w1 = -3, w2 = 1, b = 6.8813735870195432, so that
// n = 0.8813735870195432 and o = tanh(n) = 1/sqrt(2); do/dn = 1 - o^2 = 0.5, do/dw1 = x1 * 0.5 = 1, do/dx1 = -1.5.
std::string expression_json() {
  const Tensor x1 = leaf({2.0}, {}), x2 = leaf({0.0}, {}), w1 = leaf({-3.0}, {}), w2 = leaf({1.0}, {}),
               b = leaf({6.8813735870195432}, {});
  const Tensor n = add(add(mul(x1, w1), mul(x2, w2)), b);
  const Tensor o = tanh(n);
  return graph_json(o, {{x1.impl_ptr().get(), "x1"}, {x2.impl_ptr().get(), "x2"}, {w1.impl_ptr().get(), "w1"},
                        {w2.impl_ptr().get(), "w2"}, {b.impl_ptr().get(), "b"}, {n.impl_ptr().get(), "n"},
                        {o.impl_ptr().get(), "o"}});
}

// One causal head over x [T=3, C=4] with projections [C, 4]: q, k, v = x Wq, x Wk, x Wv; scores = q k^T / sqrt(4)
// [3, 3]; the positions after the query masked to -inf; softmax over keys; y = att v [3, 4]; loss = mean(y^2).
// Written out op by op, so each step is a node the page can name; the masking is the library's one
// (apply_attention_mask: where(mask, scores, -inf)), as every attention masks.
std::string head_json() {
  Generator gen(0);
  const auto random = [&](const Shape& shape) {
    Tensor t = Tensor::randn(shape, gen, DType::Float64);
    t.set_requires_grad(true);
    return t;
  };
  const Tensor x = random({3, 4}), wq = random({4, 4}), wk = random({4, 4}), wv = random({4, 4});
  const Tensor q = matmul(x, wq), k = matmul(x, wk), v = matmul(x, wv);
  const Tensor scores = mul(matmul(q, k.t()), 1.0 / std::sqrt(4.0));
  // causal[i][j]: query i may read key j, j <= i (true = may attend, as every mask of the library).
  const Tensor att = softmax(apply_attention_mask(scores, nn::causal_mask(3), "head"), -1);
  const Tensor y = matmul(att, v);
  const Tensor loss = mean(mul(y, y));
  return graph_json(loss, {{x.impl_ptr().get(), "x"}, {wq.impl_ptr().get(), "Wq"}, {wk.impl_ptr().get(), "Wk"},
                           {wv.impl_ptr().get(), "Wv"}, {q.impl_ptr().get(), "q"}, {k.impl_ptr().get(), "k"},
                           {v.impl_ptr().get(), "v"}, {scores.impl_ptr().get(), "scores"},
                           {att.impl_ptr().get(), "att"}, {y.impl_ptr().get(), "y"}, {loss.impl_ptr().get(), "loss"}});
}

}  // namespace

std::string lesson_graph_json(LessonGraph what) {
  switch (what) {
    case LessonGraph::expression: return expression_json();
    case LessonGraph::head: return head_json();
  }
  throw std::logic_error("lesson_graph_json: a graph without a builder");
}

}  // namespace cppgrad::web
