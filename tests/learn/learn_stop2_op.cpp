// Stop 2 (docs/learn.md): one op's forward and backward. Read core/ops/unary.cpp (exp, tanh, sigmoid: the forward,
// then the local derivative in a comment and in code) and record_op in core/autograd.h.
//
// Exercise: write softplus(x) = log(1 + e^x) as ONE op with its own backward rule, and let gradcheck (central
// differences in float64, core/gradcheck.h) judge the rule.
#include <cmath>

#include "learn.h"

namespace cppgrad::learn {
namespace {

// out = log(1 + e^x);  dx = g * e^x / (1 + e^x) = g * sigmoid(x)
Tensor softplus(const Tensor& x) {
  Tensor out;
  {
    NoGradGuard no_grad;  // the forward's own ops are not recorded: the op below is one node
    out = log(exp(x) + 1.0);
  }
  return record_op(out, "softplus", {x}, [x](const Tensor& g) {
    if constexpr (kPlantedWrong) return TensorList{mul(g, exp(x))};  // the mistake: forgot to divide by 1 + e^x
    return TensorList{mul(g, sigmoid(x))};
  });
}

TEST(Stop2, SoftplusValuesAreLogOfOnePlusExp) {
  const Tensor x = Tensor::from_vector<double>({-2.0, 0.0, 3.0}, {3});
  const std::vector<double> y = softplus(x).to_vector<double>();
  EXPECT_NEAR(y[1], std::log(2.0), 1e-15);
  EXPECT_NEAR(y[2], std::log1p(std::exp(3.0)), 1e-14);
}

// The point of the exercise: ONE node, named softplus, reading x itself. A composition (log(exp(x) + 1), recorded op
// by op) also gives the right values and passes gradcheck, but it is three nodes and no rule of its own.
TEST(Stop2, SoftplusIsOneOpWithItsOwnRule) {
  Tensor x = Tensor::from_vector<double>({-1.0, 0.5}, {2});
  x.set_requires_grad(true);
  const Tensor y = softplus(x);
  ASSERT_NE(y.grad_fn(), nullptr) << "softplus of a tensor that requires grad must be recorded";
  EXPECT_EQ(y.grad_fn()->name, "softplus") << "the result's node is the op itself, not the last op of a composition";
  ASSERT_EQ(y.grad_fn()->inputs.size(), 1u);
  EXPECT_EQ(y.grad_fn()->inputs[0].data<double>(), x.data<double>()) << "its one input is x, not exp(x) or 1 + e^x";
}

TEST(Stop2, SoftplusBackwardPassesGradcheck) {
  Generator gen(0);
  Tensor x = Tensor::randn({2, 3}, gen, DType::Float64);
  x.set_requires_grad(true);
  const GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return softplus(in[0]); }, {x});
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace
}  // namespace cppgrad::learn
