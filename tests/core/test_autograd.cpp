// The engine: accumulation, explicit upstream gradients, graph release, deep graphs, detach and no-grad.
#include <cmath>
#include <memory>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/unary.h"
#include "test_util.h"

namespace cppgrad {
namespace {

Tensor scalar_leaf(double v) {
  Tensor t = Tensor::scalar(v, DType::Float64);
  t.set_requires_grad(true);
  return t;
}

TEST(Autograd, GradAccumulatesAcrossBackwardCalls) {
  Tensor x = scalar_leaf(3.0);
  mul(x, x).backward();  // d/dx x^2 = 6
  EXPECT_DOUBLE_EQ(x.grad().item(), 6.0);
  mul(x, 2.0).backward();  // + 2
  EXPECT_DOUBLE_EQ(x.grad().item(), 8.0);
  x.zero_grad();
  EXPECT_FALSE(x.grad().defined());
}

TEST(Autograd, ValueUsedTwiceGetsBothContributions) {
  Tensor x = scalar_leaf(2.0);
  Tensor y = add(mul(x, 3.0), exp(x));  // dy/dx = 3 + e^x
  y.backward();
  EXPECT_NEAR(x.grad().item(), 3.0 + std::exp(2.0), 1e-12);
}

TEST(Autograd, BackwardWithExplicitUpstreamGradient) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3}, {3});
  x.set_requires_grad(true);
  Tensor y = mul(x, x);
  y.backward(Tensor::from_vector<double>({1, 10, 100}, {3}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 40, 600}));
}

TEST(Autograd, BackwardOnNonScalarWithoutGradientIsRefused) {
  Tensor x = Tensor::ones({2, 2}, DType::Float64);
  x.set_requires_grad(true);
  EXPECT_THROW_MSG(exp(x).backward(), std::invalid_argument, "shape [2, 2], pass the upstream gradient");
}

TEST(Autograd, UpstreamGradientShapeMustMatch) {
  Tensor x = Tensor::ones({2, 2}, DType::Float64);
  x.set_requires_grad(true);
  EXPECT_THROW_MSG(exp(x).backward(Tensor::ones({4}, DType::Float64)), std::invalid_argument,
                   "gradient shape [4] does not match the tensor's shape [2, 2]");
}

TEST(Autograd, SecondBackwardThroughReleasedGraphIsRefused) {
  Tensor x = scalar_leaf(1.5);
  Tensor y = exp(mul(x, x));
  y.backward();
  EXPECT_THROW_MSG(y.backward(), std::logic_error, "freed by the first backward");
}

TEST(Autograd, RetainGraphAllowsASecondBackward) {
  Tensor x = scalar_leaf(1.5);
  Tensor y = mul(x, x);
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_DOUBLE_EQ(x.grad().item(), 2 * 3.0);
}

// An activation lives until the last node that reads it has run, not until the whole pass ends (PyTorch frees saved
// tensors the same way): the memory of a deep network's backward falls as it goes. A probe op nearest the leaf runs
// its backward last and looks whether h, read by the two nodes after it, is gone by then; with retain_graph it stays.
TEST(Autograd, AnActivationIsFreedOnceTheNodesReadingItHaveRun) {
  for (const bool retain : {false, true}) {
    Tensor x = Tensor::from_vector({0.5, -1.0, 2.0}, {3}, DType::Float64);
    x.set_requires_grad(true);
    std::weak_ptr<TensorImpl> h_impl;
    bool h_freed_before_the_probe = false;
    const Tensor probe = record_op(mul(x.detach(), 1.0), "probe", {x}, [&](const Tensor& g) {
      h_freed_before_the_probe = h_impl.expired();
      return TensorList{g};
    });
    Tensor h = exp(probe);  // exp saves its output: h is held by the graph alone once this handle goes
    h_impl = h.impl_ptr();
    const Tensor y = sum(mul(h, h));
    h = Tensor();
    EXPECT_FALSE(h_impl.expired()) << "the graph holds h until backward";
    y.backward(Tensor(), retain);
    EXPECT_EQ(h_freed_before_the_probe, !retain) << (retain ? "retain_graph keeps h" : "h outlived its readers");
    EXPECT_NEAR(x.grad().at({2}), 2 * std::exp(4.0), 1e-9);  // d/dx e^{2x} = 2 e^{2x}
  }
}

TEST(Autograd, DeepChainDoesNotOverflowTheStack) {
  // 100k nodes: a recursive topological sort or a recursive graph destructor would overflow the stack.
  Tensor x = scalar_leaf(1.0);
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = add(y, 1e-5);
  y.backward();
  EXPECT_DOUBLE_EQ(x.grad().item(), 1.0);
  EXPECT_NEAR(y.item(), 2.0, 1e-9);
}

TEST(Autograd, DeepChainIsFreedWithoutBackward) {
  Tensor x = scalar_leaf(1.0);
  {
    Tensor y = x;
    for (int i = 0; i < 100000; ++i) y = mul(y, 1.0);
  }  // y's graph is dropped here; destruction must be iterative
  SUCCEED();
}

TEST(Autograd, DetachCutsTheGraph) {
  Tensor x = scalar_leaf(2.0);
  Tensor d = mul(x, x).detach();
  EXPECT_FALSE(d.requires_grad());
  Tensor y = mul(d, x);  // only the second factor carries a gradient: dy/dx = d = 4
  y.backward();
  EXPECT_DOUBLE_EQ(x.grad().item(), 4.0);
}

TEST(Autograd, NoGradGuardRecordsNothingAndRestores) {
  Tensor x = scalar_leaf(2.0);
  {
    NoGradGuard guard;
    EXPECT_FALSE(grad_enabled());
    Tensor y = mul(x, x);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      NoGradGuard nested;
    }
    EXPECT_FALSE(grad_enabled());
  }
  EXPECT_TRUE(grad_enabled());
  EXPECT_TRUE(mul(x, x).requires_grad());
}

TEST(Autograd, OnlyLeavesCanBeMarked) {
  Tensor x = scalar_leaf(2.0);
  Tensor y = mul(x, x);
  EXPECT_THROW_MSG(y.set_requires_grad(true), std::logic_error, "only leaf tensors");
  Tensor ids = Tensor::zeros({2}, DType::Int64);
  EXPECT_THROW_MSG(ids.set_requires_grad(true), std::invalid_argument, "only floating tensors");
}

TEST(Autograd, BackwardOnATensorThatNeedsNoGradIsRefused) {
  EXPECT_THROW_MSG(Tensor::scalar(1.0).backward(), std::logic_error, "does not require grad");
}

TEST(Autograd, GradientsOnlyFlowToInputsThatRequireThem) {
  Tensor a = Tensor::from_vector<double>({1, 2}, {2});
  a.set_requires_grad(true);
  Tensor b = Tensor::from_vector<double>({3, 4}, {2});  // a constant
  sum(mul(a, b)).backward();
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{3, 4}));
  EXPECT_FALSE(b.grad().defined());
}

TEST(Autograd, GradAccumulatesIntoNonContiguousLeafGradShape) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  x.set_requires_grad(true);
  sum(mul(x.t(), x.t())).backward();
  EXPECT_EQ(x.grad().shape(), (Shape{2, 3}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 4, 6, 8, 10, 12}));
}

TEST(Autograd, Float32TrainingPathWorks) {
  Tensor w = Tensor::from_vector<float>({0.5f, -1.0f}, {2});
  w.set_requires_grad(true);
  Tensor x = Tensor::from_vector<float>({2.0f, 3.0f}, {2});
  sum(mul(w, x)).backward();
  EXPECT_EQ(w.grad().dtype(), DType::Float32);
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2.0f, 3.0f}));
}

}  // namespace
}  // namespace cppgrad
