// Ops at their edges behave as PyTorch's (1.13): the same values and gradients, or the same refusal, for 0-d
// inputs, out-of-range arguments and exponents at their boundaries. Each expectation was checked against PyTorch;
// the comment above it gives the PyTorch call.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/views.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using ::testing::ElementsAre;

Tensor f64(std::vector<double> v, const Shape& shape) { return Tensor::from_vector<double>(v, shape); }
Tensor ids(std::vector<std::int64_t> v, const Shape& shape) { return Tensor::from_vector<std::int64_t>(v, shape); }

TEST(OpsAtEdges, NarrowStaysInsideTheDimAndCountsANegativeStartFromTheEnd) {
  const Tensor x = f64({0, 1, 2, 3}, {4});
  // x.narrow(0, 2, 3): RuntimeError "start (2) + length (3) exceeds dimension size (4)"
  EXPECT_THROW_MSG(x.narrow(0, 2, 3), std::out_of_range, "narrow: start (2) + length (3) exceeds dim 0 of size 4");
  // x.narrow(0, 1, -1): refused
  EXPECT_THROW_MSG(x.narrow(0, 1, -1), std::out_of_range, "length (-1)");
  // x.narrow(0, -2, 2) -> [2., 3.]
  EXPECT_EQ(x.narrow(0, -2, 2).to_vector<double>(), (std::vector<double>{2, 3}));
  // x.narrow(0, -5, 1): refused; x.narrow(0, 4, 0) -> empty
  EXPECT_THROW_MSG(x.narrow(0, -5, 1), std::out_of_range, "narrow: start -5 out of range");
  EXPECT_EQ(x.narrow(0, 4, 0).shape(), Shape{0});
  // torch.narrow(torch.tensor(3.), 0, 0, 1): "narrow() cannot be applied to a 0-dim tensor."
  EXPECT_THROW_MSG(Tensor::scalar(3.0, DType::Float64).narrow(0, 0, 1), std::invalid_argument, "narrow: cannot be applied to a 0-d");
}

TEST(OpsAtEdges, SliceAndCatRefuse0dTensors) {
  const Tensor s = Tensor::scalar(3.0, DType::Float64);
  // torch.tensor(3.)[0:1]: IndexError "slice() cannot be applied to a 0-dim tensor."
  EXPECT_THROW_MSG(slice(s, 0, 0, 1), std::invalid_argument, "slice: cannot be applied to a 0-d tensor");
  // torch.cat([s, s]): RuntimeError "zero-dimensional tensor (at position 0) cannot be concatenated"
  EXPECT_THROW_MSG(cat({s, s}, 0), std::invalid_argument, "cat: tensor 0 is 0-d (shape []) and cannot be concatenated");
  EXPECT_THROW_MSG(cat({f64({1}, {1}), s}, 0), std::invalid_argument, "cat: tensor 1 is 0-d");
}

TEST(OpsAtEdges, SelectAndSizeRefuseA0dTensor) {
  // torch.tensor(3.).select(0, 0): "select() cannot be applied to a 0-dim tensor."; .size(0): IndexError
  const Tensor s = Tensor::scalar(3.0, DType::Float64);
  EXPECT_THROW_MSG(s.select(0, 0), std::invalid_argument, "select: cannot be applied to a 0-d tensor");
  EXPECT_THROW_MSG(s.size(0), std::out_of_range, "size: a 0-d tensor (shape []) has no dim 0");
}

TEST(OpsAtEdges, IndexSelectAndGatherRead0dInputsAsOneElement) {
  Tensor s = Tensor::scalar(3.0, DType::Float64);
  s.set_requires_grad(true);
  // torch.index_select(s, 0, torch.tensor([0])) -> tensor(3.) (0-d); backward(2.) gives s.grad 2.
  Tensor r = index_select(s, 0, ids({0}, {1}));
  EXPECT_EQ(r.shape(), Shape{});
  EXPECT_EQ(r.item(), 3.0);
  r.backward(Tensor::scalar(2.0, DType::Float64));
  EXPECT_EQ(s.grad().item(), 2.0);
  // torch.index_select(s, 0, torch.tensor([1])): IndexError "index out of range in self"
  EXPECT_THROW_MSG(index_select(s, 0, ids({1}, {1})), std::out_of_range, "index_select: index 1 out of range");
  // torch.index_select(x, 0, torch.tensor(1)) on x = arange(4.) -> tensor([1.]) (a 0-d index keeps a dim of 1)
  EXPECT_EQ(index_select(f64({0, 1, 2, 3}, {4}), 0, ids({1}, {})).to_vector<double>(), (std::vector<double>{1}));
  EXPECT_EQ(index_select(f64({0, 1, 2, 3}, {4}), 0, ids({1}, {})).shape(), Shape{1});

  s.zero_grad();
  // torch.gather(s, 0, torch.tensor([0, 0])) -> tensor([3., 3.]); backward([2., 5.]) gives s.grad 7.
  Tensor g = gather(s, 0, ids({0, 0}, {2}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{3, 3}));
  g.backward(f64({2, 5}, {2}));
  EXPECT_EQ(s.grad().item(), 7.0);
  // torch.gather(s, 0, torch.tensor(0)) -> tensor(3.) (0-d)
  EXPECT_EQ(gather(s, 0, ids({0}, {})).shape(), Shape{});
  // torch.gather(s, 0, torch.tensor([1])): "index 1 is out of bounds for dimension 0 with size 1"
  EXPECT_THROW_MSG(gather(s, 0, ids({1}, {1})), std::out_of_range, "gather: index 1 out of range for dim 0 of size 1");
  // torch.gather(s, 0, torch.tensor([[0]])): "Index tensor must have the same number of dimensions as input tensor"
  EXPECT_THROW_MSG(gather(s, 0, ids({0}, {1, 1})), std::invalid_argument, "gather: index [1, 1] must have the same rank");
}

TEST(OpsAtEdges, PowToTheZerothHasGradientZeroEverywhere) {
  // x = tensor([0., 1., 2.]); x.pow(0).sum().backward() -> x.grad = [0., 0., 0.] (not NaN at 0)
  Tensor x = f64({0, 1, 2}, {3});
  x.set_requires_grad(true);
  sum(pow(x, 0.0)).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 0, 0}));
  // and the other exponents keep PyTorch's values at 0: pow(0.5) -> inf, pow(2) -> 0, pow(-1) -> -inf, pow(1) -> 1
  for (const auto& [p, at_zero] : std::vector<std::pair<double, double>>{
           {0.5, INFINITY}, {2.0, 0.0}, {-1.0, -INFINITY}, {1.0, 1.0}}) {
    Tensor y = f64({0, 1, 2}, {3});
    y.set_requires_grad(true);
    sum(pow(y, p)).backward();
    EXPECT_EQ(y.grad().to_vector<double>()[0], at_zero) << "pow " << p;
  }
}

}  // namespace
}  // namespace cppgrad
