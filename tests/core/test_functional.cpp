// The functional API (core/functional.h) against closed forms and central differences, in float64.
#include "core/functional.h"

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/unary.h"
#include "test_util.h"

namespace cppgrad {
namespace {

namespace fn = autograd::functional;
using fn::Fn;

constexpr double kExact = 1e-10;      // closed forms: only rounding separates the two sides
constexpr double kEps = 1e-6;         // the step of the central differences
constexpr double kFiniteDiff = 1e-6;  // their truncation (~eps^2) and rounding (~1e-16 / eps) errors are far below

Tensor f64(const std::vector<double>& values, const Shape& shape) { return Tensor::from_vector<double>(values, shape); }

// Same shape, and every element within tol (absolute); otherwise says where they first part.
::testing::AssertionResult all_close(const Tensor& got, const Tensor& want, double tol) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << " vs " << shape_str(want.shape());
  const std::vector<double> g = got.to_double_vector(), w = want.to_double_vector();
  for (std::size_t i = 0; i < w.size(); ++i)
    if (!(std::abs(g[i] - w[i]) <= tol))
      return ::testing::AssertionFailure() << "element " << i << ": " << g[i] << " vs " << w[i] << " (tol " << tol
                                           << ")";
  return ::testing::AssertionSuccess();
}

// x + eps v, a constant.
Tensor step(const Tensor& x, const Tensor& v, double eps) { return add(x, mul(v, eps)); }

// f(x, y) = sum(tanh(x) * exp(x * y)), x, y: [3] -> a scalar; and its elementwise, vector-valued form.
Tensor wiggly(const std::vector<Tensor>& in) { return mul(tanh(in[0]), exp(mul(in[0], in[1]))); }
Tensor wiggly_sum(const std::vector<Tensor>& in) { return sum(wiggly(in)); }

// The gradient of a scalar f at the inputs, one tensor per input, as the vjp with v = 1.
std::vector<Tensor> gradient(const Fn& f, const std::vector<Tensor>& inputs) {
  return fn::vjp(f, inputs, Tensor::ones({}, DType::Float64)).vjps;
}

TEST(Functional, HessianOfAQuadraticFormIsAPlusATransposed) {
  const Tensor a = f64({1, 2, -1, 0.5, 3, 4, -2, 0, 1.5}, {3, 3});  // not symmetric, so A != (A + A^T) / 2
  const Fn quadratic = [a](const std::vector<Tensor>& x) { return sum(mul(x[0], matmul(a, x[0]))); };  // x^T A x
  const Tensor x = f64({0.3, -1.2, 2.0}, {3});
  EXPECT_TRUE(all_close(fn::hessian(quadratic, x), add(a, a.t()), kExact));
  // float32 runs the same code, to float32's precision
  const Tensor a32 = a.to(DType::Float32);
  const Fn quadratic32 = [a32](const std::vector<Tensor>& x) { return sum(mul(x[0], matmul(a32, x[0]))); };
  EXPECT_TRUE(all_close(fn::hessian(quadratic32, x.to(DType::Float32)), add(a, a.t()), 1e-5));
}

TEST(Functional, HessianOfLogSumExpIsDiagPMinusPPTransposed) {
  const std::vector<double> xs = {0.5, -1.0, 2.0, 0.1};
  const Fn logsumexp = [](const std::vector<Tensor>& x) { return log(sum(exp(x[0]))); };
  double total = 0;
  for (double v : xs) total += std::exp(v);
  std::vector<double> want;  // want[i][j] = p_i [i == j] - p_i p_j, p = softmax(x)
  for (std::size_t i = 0; i < xs.size(); ++i)
    for (std::size_t j = 0; j < xs.size(); ++j) {
      const double pi = std::exp(xs[i]) / total, pj = std::exp(xs[j]) / total;
      want.push_back((i == j ? pi : 0.0) - pi * pj);
    }
  EXPECT_TRUE(all_close(fn::hessian(logsumexp, f64(xs, {4})), f64(want, {4, 4}), kExact));
}

TEST(Functional, JacobianOfTanhOfWxIsDiagOneMinusTanhSquaredTimesW) {
  const Tensor w = f64({0.2, -0.4, 0.9, 1.1, 0.3, -0.7}, {2, 3}), x = f64({0.5, -1.5, 0.25}, {3});
  // W: [2, 3]  x: [3] -> [2]
  const Fn layer = [](const std::vector<Tensor>& in) { return tanh(matmul(in[0], in[1])); };
  const std::vector<Tensor> jac = fn::jacobian(layer, {w, x});
  const std::vector<double> t = tanh(matmul(w, x)).to_vector<double>();
  std::vector<double> d_w, d_x;  // d y_a / d W_bc = (1 - t_a^2) [a == b] x_c ;  d y_a / d x_c = (1 - t_a^2) W_ac
  for (std::int64_t a = 0; a < 2; ++a) {
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t c = 0; c < 3; ++c) d_w.push_back(a == b ? (1 - t[a] * t[a]) * x.at({c}) : 0.0);
    for (std::int64_t c = 0; c < 3; ++c) d_x.push_back((1 - t[a] * t[a]) * w.at({a, c}));
  }
  EXPECT_TRUE(all_close(jac[0], f64(d_w, {2, 2, 3}), kExact));  // [out..., W's shape...]
  EXPECT_TRUE(all_close(jac[1], f64(d_x, {2, 3}), kExact));
}

TEST(Functional, JvpIsJTimesVAndVjpIsVTransposedJ) {
  const Tensor x = f64({0.1, -0.3, 0.5, 0.7, -0.2, 0.4}, {2, 3}), y = f64({0.6, -0.1, 0.3, 0.8, -0.5, 0.2}, {3, 2});
  // x: [2, 3]  y: [3, 2] -> [2, 2]
  const Fn f = [](const std::vector<Tensor>& in) {
    return mul(tanh(matmul(in[0], in[1])), exp(sum(in[0], {1}, /*keepdim=*/true)));
  };
  const std::vector<Tensor> jac = fn::jacobian(f, {x, y});  // [2, 2, 2, 3] and [2, 2, 3, 2]
  // Flattened, J_i is [4, 6]: J v = J_0 v_0 + J_1 v_1, and v^T J_i is a row of 6.
  const std::vector<Tensor> v_in = {f64({1, -2, 0.5, 0.3, 0.9, -1}, {2, 3}),
                                    f64({-0.4, 0.2, 1.5, -1, 0.7, 0.1}, {3, 2})};
  const Tensor want_jv = add(matmul(jac[0].reshape({4, 6}), v_in[0].reshape({6})),
                             matmul(jac[1].reshape({4, 6}), v_in[1].reshape({6}))).reshape({2, 2});
  const fn::JvpResult jv = fn::jvp(f, {x, y}, v_in);
  EXPECT_TRUE(all_close(jv.jvp, want_jv, kExact));
  EXPECT_TRUE(all_close(jv.output, f({x, y}), kExact));

  const Tensor v_out = f64({0.5, -1, 2, 0.25}, {2, 2});
  const fn::VjpResult vj = fn::vjp(f, {x, y}, v_out);
  EXPECT_TRUE(all_close(vj.vjps[0], matmul(v_out.reshape({4}), jac[0].reshape({4, 6})).reshape({2, 3}), kExact));
  EXPECT_TRUE(all_close(vj.vjps[1], matmul(v_out.reshape({4}), jac[1].reshape({4, 6})).reshape({3, 2}), kExact));
  EXPECT_FALSE(vj.output.requires_grad());  // without create_graph, results are constants
  EXPECT_FALSE(vj.vjps[0].requires_grad());
}

TEST(Functional, HvpIsTheHessianTimesV) {
  // Both inputs at once: z = [x, y] holds them, so hessian(z) is the full block Hessian of wiggly_sum.
  const Tensor x = f64({0.4, -0.8, 1.2}, {3}), y = f64({0.3, 0.5, -0.6}, {3});
  const Fn of_z = [](const std::vector<Tensor>& z) { return wiggly_sum({z[0].slice(0, 0, 3), z[0].slice(0, 3, 6)}); };
  const Tensor h = fn::hessian(of_z, cat({x, y}, 0));  // [6, 6]
  const std::vector<Tensor> v = {f64({1, 0.5, -2}, {3}), f64({-0.7, 0.2, 1.1}, {3})};
  const fn::HvpResult hv = fn::hvp(wiggly_sum, {x, y}, v);
  EXPECT_TRUE(all_close(cat(hv.hvps, 0), matmul(h, cat(v, 0)), kExact));
  EXPECT_TRUE(all_close(hv.value, wiggly_sum({x, y}), kExact));
}

TEST(Functional, AgreesWithCentralDifferences) {
  const Tensor x = f64({0.4, -0.8, 1.2}, {3}), y = f64({0.3, 0.5, -0.6}, {3});
  const Tensor vx = f64({1, 0.5, -2}, {3}), vy = f64({-0.7, 0.2, 1.1}, {3});
  // jvp: J v ~ (f(x + eps v) - f(x - eps v)) / 2 eps, for the vector-valued form
  const Tensor jv_fd = mul(sub(wiggly({step(x, vx, kEps), step(y, vy, kEps)}),
                               wiggly({step(x, vx, -kEps), step(y, vy, -kEps)})), 0.5 / kEps);
  EXPECT_TRUE(all_close(fn::jvp(wiggly, {x, y}, {vx, vy}).jvp, jv_fd, kFiniteDiff));
  // hvp: H v ~ (grad(x + eps v) - grad(x - eps v)) / 2 eps, for each input
  const std::vector<Tensor> up = gradient(wiggly_sum, {step(x, vx, kEps), step(y, vy, kEps)});
  const std::vector<Tensor> down = gradient(wiggly_sum, {step(x, vx, -kEps), step(y, vy, -kEps)});
  const fn::HvpResult hv = fn::hvp(wiggly_sum, {x, y}, {vx, vy});
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_TRUE(all_close(hv.hvps[i], mul(sub(up[i], down[i]), 0.5 / kEps), kFiniteDiff)) << "input " << i;
  // hessian in x (y fixed): column j ~ (grad(x + eps e_j) - grad(x - eps e_j)) / 2 eps
  const Fn in_x = [y](const std::vector<Tensor>& in) { return wiggly_sum({in[0], y}); };
  const Tensor h = fn::hessian(in_x, x);
  for (std::int64_t j = 0; j < 3; ++j) {
    std::vector<double> e(3, 0.0);
    e[static_cast<std::size_t>(j)] = 1;
    const Tensor e_j = f64(e, {3});
    const Tensor column = mul(sub(gradient(in_x, {step(x, e_j, kEps)})[0], gradient(in_x, {step(x, e_j, -kEps)})[0]),
                              0.5 / kEps);
    EXPECT_TRUE(all_close(h.slice(1, j, j + 1).reshape({3}), column, kFiniteDiff)) << "column " << j;
  }
}

TEST(Functional, TheCheckCatchesAWrongAnswer) {
  // The comparison the tests above rely on must fail when the answer is wrong: hvp of f against the Hessian of a
  // slightly different g, and a Jacobian against its transpose.
  const Tensor x = f64({0.4, -0.8, 1.2}, {3}), v = f64({1, 0.5, -2}, {3});
  const Fn f = [](const std::vector<Tensor>& in) { return sum(mul(tanh(in[0]), exp(in[0]))); };
  const Fn g = [](const std::vector<Tensor>& in) { return sum(mul(tanh(in[0]), exp(mul(in[0], 1.01)))); };
  const Tensor hv = fn::hvp(f, {x}, {v}).hvps[0];
  EXPECT_TRUE(all_close(hv, matmul(fn::hessian(f, x), v), kExact));
  EXPECT_FALSE(all_close(hv, matmul(fn::hessian(g, x), v), kFiniteDiff));
  const Tensor w = f64({0.2, -0.4, 0.9, 1.1, 0.3, -0.7, 0.5, 0.6, -0.1}, {3, 3});
  const Fn layer = [w](const std::vector<Tensor>& in) { return tanh(matmul(w, in[0])); };
  const Tensor jac = fn::jacobian(layer, {x})[0];
  EXPECT_FALSE(all_close(jac.t(), jac, kFiniteDiff));  // same shape, wrong orientation
}

TEST(Functional, TheCallersInputsAreNotModified) {
  const Tensor x = f64({0.4, -0.8, 1.2}, {3});
  Tensor y = f64({0.3, 0.5, -0.6}, {3});
  y.set_requires_grad(true);
  const Tensor v = f64({1, 0.5, -2}, {3});
  {
    NoGradGuard no_grad;  // the functions turn grad mode on for themselves, as PyTorch's do
    fn::jacobian(wiggly, {x, y});
    fn::vjp(wiggly, {x, y}, v);
    fn::jvp(wiggly, {x, y}, {v, v});
    fn::hvp(wiggly_sum, {x, y}, {v, v});
    fn::hessian([y](const std::vector<Tensor>& in) { return wiggly_sum({in[0], y}); }, x);
  }
  EXPECT_FALSE(x.requires_grad());
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(y.grad().defined());
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0.4, -0.8, 1.2}));
  EXPECT_TRUE(grad_enabled());
}

TEST(Functional, AnOutputThatDoesNotDependOnAnInputGetsZeros) {
  const Tensor x = f64({0.4, -0.8, 1.2}, {3}), unused = f64({1, 2}, {2});
  const Fn ignores_second = [](const std::vector<Tensor>& in) { return exp(in[0]); };
  EXPECT_TRUE(all_close(fn::jacobian(ignores_second, {x, unused})[1], Tensor::zeros({3, 2}, DType::Float64), 0));
  const Fn linear = [](const std::vector<Tensor>& in) { return sum(mul(in[0], 3.0)); };  // a constant gradient
  EXPECT_TRUE(all_close(fn::hessian(linear, x), Tensor::zeros({3, 3}, DType::Float64), 0));
  const Fn constant = [](const std::vector<Tensor>&) { return Tensor::ones({2}, DType::Float64); };
  EXPECT_TRUE(all_close(fn::jvp(constant, {x}, {x}).jvp, Tensor::zeros({2}, DType::Float64), 0));
}

TEST(Functional, CreateGraphLetsTheFunctionsNest) {
  // The Jacobian of a vjp taken with create_graph is the Hessian: the inner vjp keeps its graph back to x.
  const Tensor x = f64({0.4, -0.8, 1.2}, {3});
  const Fn f = [](const std::vector<Tensor>& in) { return sum(mul(tanh(in[0]), exp(in[0]))); };
  const Fn grad_f = [f](const std::vector<Tensor>& in) {
    return fn::vjp(f, in, Tensor::ones({}, DType::Float64), /*create_graph=*/true).vjps[0];
  };
  EXPECT_TRUE(all_close(fn::jacobian(grad_f, {x})[0], fn::hessian(f, x), kExact));
  // and a jvp with create_graph is differentiable in v: with v for both inputs, d/dv sum(J_0 v + J_1 v) =
  // J_0^T 1 + J_1^T 1
  Tensor v = f64({1, 0.5, -2}, {3});
  v.set_requires_grad(true);
  const Tensor jv = fn::jvp(wiggly, {x, x}, {v, v}, /*create_graph=*/true).jvp;
  const std::vector<Tensor> vjps = fn::vjp(wiggly, {x, x}, Tensor::ones({3}, DType::Float64)).vjps;
  const Tensor want = add(vjps[0], vjps[1]);
  EXPECT_TRUE(all_close(autograd::grad({sum(jv)}, {v})[0], want, kExact));
}

TEST(Functional, RefusesBadArgumentsNamingTheFunctionAndTheShapes) {
  const Tensor x = f64({0.4, -0.8, 1.2}, {3});
  const Fn elementwise = [](const std::vector<Tensor>& in) { return exp(in[0]); };  // [3] -> [3]
  EXPECT_THROW_MSG(fn::vjp(elementwise, {x}, f64({1, 2}, {2})), std::invalid_argument,
                   "vjp: v is [2] float64 but must be shaped like f's output, [3] float64");
  EXPECT_THROW_MSG(fn::vjp(elementwise, {x}, Tensor::ones({3}, DType::Float32)), std::invalid_argument,
                   "vjp: v is [3] float32 but must be shaped like f's output, [3] float64");
  EXPECT_THROW_MSG(fn::jvp(wiggly, {x, x}, {x}), std::invalid_argument, "jvp: got 1 tensors in v for 2 inputs");
  EXPECT_THROW_MSG(fn::jvp(wiggly, {x, x}, {x, f64({1}, {1})}), std::invalid_argument,
                   "jvp: v[1] is [1] float64 but must be shaped like inputs[1], [3] float64");
  EXPECT_THROW_MSG(fn::hvp(elementwise, {x}, {x}), std::invalid_argument,
                   "hvp: f must return one element (a loss) but returned shape [3]");
  EXPECT_THROW_MSG(fn::hessian(elementwise, x), std::invalid_argument,
                   "hessian: f must return one element (a loss) but returned shape [3]");
  EXPECT_THROW_MSG(fn::jacobian(elementwise, {Tensor::arange(0, 3)}), std::invalid_argument,
                   "jacobian: input 0 is [3] int64; only floating tensors");
  EXPECT_THROW_MSG(fn::jacobian([](const std::vector<Tensor>&) { return Tensor(); }, {x}), std::invalid_argument,
                   "jacobian: f returned undefined");
}

}  // namespace
}  // namespace cppgrad
