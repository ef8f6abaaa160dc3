// Stop 1 (docs/learn.md): a scalar Tensor and backward(). Read core/tensor.h (the handle and its grad fields).
//
// Exercise: y = x^3 + 3x at x = 2, built from ops; backward() must leave dy/dx = 3x^2 + 3 = 15 in x.grad().
// x appears in three products and one sum: its gradient is the sum of what each use sends back.
#include "learn.h"

namespace cppgrad::learn {
namespace {

// The solution: y(x) written with ops, so the engine records every step.
Tensor cubic_plus_linear(const Tensor& x) {
  if constexpr (kPlantedWrong) return x * x + x * 3.0;  // the mistake: x^2 + 3x (dy/dx = 7 at x = 2)
  return x * x * x + x * 3.0;
}

TEST(Stop1, BackwardGivesTheDerivativeOfAScalarFunction) {
  Tensor x = Tensor::scalar(2.0, DType::Float64);
  x.set_requires_grad(true);
  const Tensor y = cubic_plus_linear(x);
  EXPECT_DOUBLE_EQ(y.item(), 14.0);  // 8 + 6
  y.backward();
  EXPECT_DOUBLE_EQ(x.grad().item(), 15.0);  // 3 * 2^2 + 3
}

TEST(Stop1, AValueUsedTwiceGetsBothContributions) {
  Tensor x = Tensor::scalar(3.0, DType::Float64);
  x.set_requires_grad(true);
  const Tensor y = x * x;  // one op, x as both inputs: d/dx = x + x
  y.backward();
  EXPECT_DOUBLE_EQ(x.grad().item(), 6.0);
}

}  // namespace
}  // namespace cppgrad::learn
