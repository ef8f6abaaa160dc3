// Stop 3 (docs/learn.md): the engine's topological sort. Read topological_order and the backward pass after it in
// core/autograd.cpp: every tensor's gradient must be complete before its node sends gradients on to its inputs.
//
// Exercise: write the order yourself. From a root, list every tensor that requires grad, each AFTER all the tensors
// its node read (grad_fn()->inputs), iteratively (a recursive walk overflows the stack on a deep graph).
#include <algorithm>
#include <vector>

#include "learn.h"

namespace cppgrad::learn {
namespace {

bool same(const Tensor& a, const Tensor& b) { return a.impl_ptr() == b.impl_ptr(); }
bool contains(const std::vector<Tensor>& v, const Tensor& t) {
  return std::any_of(v.begin(), v.end(), [&](const Tensor& u) { return same(u, t); });
}

// Post-order depth-first search with an explicit stack: a tensor is emitted once all of its inputs have been.
std::vector<Tensor> topological_order(const Tensor& root) {
  std::vector<Tensor> order, seen{root};
  std::vector<std::pair<Tensor, std::size_t>> stack{{root, 0}};  // a tensor and the next input to visit
  while (!stack.empty()) {
    auto& [t, next] = stack.back();
    const auto& node = t.grad_fn();
    if (node && next < node->inputs.size()) {
      const Tensor in = node->inputs[next++];
      if (in.defined() && in.requires_grad() && !contains(seen, in)) {
        seen.push_back(in);
        stack.emplace_back(in, 0);
      }
    } else {
      order.push_back(t);
      stack.pop_back();
    }
  }
  if constexpr (kPlantedWrong) std::reverse(order.begin(), order.end());  // the mistake: the root first
  return order;
}

TEST(Stop3, EveryTensorComesAfterTheTensorsItWasComputedFrom) {
  Tensor a = Tensor::scalar(1.5, DType::Float64);
  a.set_requires_grad(true);
  const Tensor b = a * a;  // a diamond: a reaches d along three paths
  const Tensor c = b + a;
  const Tensor d = c * b;
  const std::vector<Tensor> order = topological_order(d);
  ASSERT_EQ(order.size(), 4u);  // a, b, c, d, each once
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (!order[k].grad_fn()) continue;
    for (const Tensor& in : order[k].grad_fn()->inputs) {
      const auto at = std::find_if(order.begin(), order.end(), [&](const Tensor& u) { return same(u, in); });
      ASSERT_NE(at, order.end());
      EXPECT_LT(at - order.begin(), static_cast<std::ptrdiff_t>(k)) << "an input comes after its output";
    }
  }
  EXPECT_TRUE(same(order.back(), d));
}

}  // namespace
}  // namespace cppgrad::learn
