// Gradients of gradients: autograd::grad, create_graph, and the engine's refusals around them.
#include <memory>
#include <set>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/unary.h"
#include "test_util.h"

namespace cppgrad {
namespace {

Tensor leaf_of(std::vector<double> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  Tensor t = Tensor::from_vector<double>(values, {n});
  t.set_requires_grad(true);
  return t;
}

TEST(HigherOrder, SecondAndThirdDerivativesOfACube) {
  Tensor x = leaf_of({-1.5, 0.5, 2.0});
  Tensor y = sum(mul(mul(x, x), x));  // y = sum x^3
  Tensor d1 = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];  // 3x^2
  Tensor d2 = autograd::grad({sum(d1)}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];  // 6x
  Tensor d3 = autograd::grad({sum(d2)}, {x})[0];  // 6
  const std::vector<double> xs = x.to_vector<double>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    EXPECT_NEAR(d1.to_vector<double>()[i], 3 * xs[i] * xs[i], 1e-12);
    EXPECT_NEAR(d2.to_vector<double>()[i], 6 * xs[i], 1e-12);
    EXPECT_NEAR(d3.to_vector<double>()[i], 6, 1e-12);
  }
  EXPECT_FALSE(d3.requires_grad());  // without create_graph a gradient is a constant
  EXPECT_FALSE(x.grad().defined());  // grad() returns gradients; it never touches .grad
}

TEST(HigherOrder, BackwardWithCreateGraphLeavesADifferentiableGradient) {
  Tensor x = leaf_of({0.3, -0.7});
  sum(exp(mul(x, 2.0))).backward(Tensor(), std::nullopt, /*create_graph=*/true);  // .grad = 2 e^(2x)
  Tensor g = x.grad();
  ASSERT_TRUE(g.requires_grad());
  x.zero_grad();  // otherwise the second backward adds into the first's result, as in PyTorch
  sum(g).backward();
  for (std::int64_t i = 0; i < 2; ++i) EXPECT_NEAR(x.grad().at({i}), 4 * std::exp(2 * x.at({i})), 1e-12);
}

TEST(HigherOrder, DifferentiatingAFirstOrderGradientSaysToPassCreateGraph) {
  Tensor x = leaf_of({1.0, 2.0});
  sum(mul(x, x)).backward();
  try {
    sum(x.grad()).backward();
    FAIL() << "expected a refusal";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("create_graph"));
  }
}

TEST(HigherOrder, AnUnusedInputIsAnErrorUnlessAllowed) {
  Tensor x = leaf_of({1.0}), unused = leaf_of({2.0});
  Tensor y = sum(mul(x, 3.0));
  EXPECT_THROW(autograd::grad({y}, {x, unused}, {}, true), std::invalid_argument);
  const std::vector<Tensor> g = autograd::grad({y}, {x, unused}, {}, true, false, /*allow_unused=*/true);
  EXPECT_DOUBLE_EQ(g[0].item(), 3.0);
  EXPECT_FALSE(g[1].defined());
}

TEST(HigherOrder, GradWithRespectToAnIntermediateAndSeveralOutputs) {
  Tensor x = leaf_of({1.0, 2.0});
  Tensor h = mul(x, x);                 // h = x^2
  Tensor a = sum(mul(h, 3.0)), b = sum(exp(h));
  // d(a + b)/dh = 3 + e^h ; with grad_outputs 1 and 2: 3 + 2 e^h
  const std::vector<Tensor> g = autograd::grad({a, b}, {h, x}, {Tensor::scalar(1.0, DType::Float64),
                                                                 Tensor::scalar(2.0, DType::Float64)});
  for (std::int64_t i = 0; i < 2; ++i) {
    const double hv = h.at({i}), xv = x.at({i});
    EXPECT_NEAR(g[0].at({i}), 3 + 2 * std::exp(hv), 1e-12);
    EXPECT_NEAR(g[1].at({i}), (3 + 2 * std::exp(hv)) * 2 * xv, 1e-12);
  }
}

TEST(HigherOrder, GradRefusesAMismatchedGradOutput) {
  Tensor x = leaf_of({1.0, 2.0});
  Tensor y = mul(x, 2.0);
  EXPECT_THROW(autograd::grad({y}, {x}), std::invalid_argument);  // two elements: needs a grad_output
  EXPECT_THROW(autograd::grad({y}, {x}, {Tensor::ones({3}, DType::Float64)}), std::invalid_argument);
  EXPECT_THROW(autograd::grad({y}, {x}, {Tensor(), Tensor()}), std::invalid_argument);
  EXPECT_THROW(autograd::grad({y}, {Tensor::ones({2}, DType::Float64)}, {Tensor::ones({2}, DType::Float64)}),
               std::logic_error);  // an input that does not require grad
}

// Weak handles to every tensor and node reachable from `roots` through the graph: how many are still alive.
struct GraphCensus {
  std::vector<std::weak_ptr<TensorImpl>> tensors;
  std::vector<std::weak_ptr<Node>> nodes;

  explicit GraphCensus(const std::vector<Tensor>& roots) {
    std::vector<Tensor> stack(roots);
    std::set<const void*> seen;
    while (!stack.empty()) {
      Tensor t = stack.back();
      stack.pop_back();
      if (!t.defined() || !seen.insert(t.impl_ptr().get()).second) continue;
      tensors.push_back(t.impl_ptr());
      if (t.impl().grad) stack.push_back(Tensor(t.impl().grad));
      if (const auto& node = t.grad_fn()) {
        nodes.push_back(node);
        for (const Tensor& in : node->inputs) stack.push_back(in);
      }
    }
  }
  std::size_t alive() const {
    std::size_t n = 0;
    for (const auto& t : tensors) n += !t.expired();
    for (const auto& node : nodes) n += !node.expired();
    return n;
  }
};

TEST(HigherOrder, DroppingCreateGraphResultsFreesEveryTensorAndNode) {
  GraphCensus census({});
  {
    Tensor x = leaf_of({0.5, -1.0, 2.0});
    Tensor y = sum(mul(tanh(mul(x, x)), exp(x)));
    Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    Tensor h = autograd::grad({sum(g)}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    census = GraphCensus({x, y, g, h});
    EXPECT_GT(census.alive(), 20u);  // the forward graph, the gradient's graph and the second gradient's
  }
  EXPECT_EQ(census.alive(), 0u);  // no reference cycle keeps any of them
}

TEST(HigherOrder, BackwardWithCreateGraphFreesEverythingOnceTheGradientIsCleared) {
  // As in PyTorch, x.grad then holds a graph that refers back to x; clearing the gradient (what every optimizer's
  // zero_grad does) ends that loop, and everything is freed with the last handle.
  GraphCensus census({});
  {
    Tensor x = leaf_of({0.5, -1.0});
    sum(mul(mul(x, x), x)).backward(Tensor(), std::nullopt, /*create_graph=*/true);
    census = GraphCensus({x});
    EXPECT_GT(census.alive(), 5u);
    x.zero_grad();
  }
  EXPECT_EQ(census.alive(), 0u);
}

TEST(HigherOrder, TheCensusSeesTheLoopThatAnUnclearedCreateGraphGradientMakes) {
  // Proof that the census can fail: without zero_grad the loop x -> x.grad -> its graph -> x stays alive.
  GraphCensus census({});
  std::weak_ptr<TensorImpl> x_impl;
  {
    Tensor x = leaf_of({0.5, -1.0});
    sum(mul(mul(x, x), x)).backward(Tensor(), std::nullopt, /*create_graph=*/true);
    census = GraphCensus({x});
    x_impl = x.impl_ptr();
  }
  EXPECT_GT(census.alive(), 0u);
  Tensor(x_impl.lock()).zero_grad();  // end the loop, so the test itself leaks nothing
  EXPECT_EQ(census.alive(), 0u);
}

}  // namespace
}  // namespace cppgrad
