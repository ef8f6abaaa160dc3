// Elementwise arithmetic and math. Binary ops broadcast; their backward sums the gradient back to each
// input's shape with sum_to. Derivatives are quoted beside each backward.
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "core/kernels/elementwise.h"
#include "core/ops.h"
#include "core/ops/elementwise_helpers.h"

namespace cppgrad {

using op_helpers::binary_forward;
using op_helpers::grad_times;
using op_helpers::unary_forward;

// Sums g over the dims that broadcasting added or stretched, so the result has `shape`.
Tensor sum_to(const Tensor& g, const Shape& shape, std::source_location where) {
  if (g.shape() == shape) return g;
  const std::int64_t lead = g.dim() - static_cast<std::int64_t>(shape.size());
  if (lead < 0)
    throw std::invalid_argument("sum_to: cannot sum " + shape_str(g.shape()) + " down to larger rank " + shape_str(shape));
  Dims dims;
  for (std::int64_t i = 0; i < g.dim(); ++i)
    if (i < lead || (shape[i - lead] == 1 && g.shape()[i] != 1)) dims.push_back(i);
  if (dims.empty()) return g.reshape(shape);
  return reshape(sum(g, dims, /*keepdim=*/true, where), shape, where);
}

// ------------------------------------------------------------------------------------------- binary
// out = a + b;  da = g, db = g
Tensor add(const Tensor& a, const Tensor& b, std::source_location where) {
  Tensor out = binary_forward(a, b, "add", [](auto x, auto y) { return x + y; });
  const Shape sa = a.shape(), sb = b.shape();
  return record_op(out, "add", {a, b}, [sa, sb](const Tensor& g) {
    return TensorList{sum_to(g, sa), sum_to(g, sb)};
  }, where);
}

// out = a - b;  da = g, db = -g
Tensor sub(const Tensor& a, const Tensor& b, std::source_location where) {
  Tensor out = binary_forward(a, b, "sub", [](auto x, auto y) { return x - y; });
  const Shape sa = a.shape(), sb = b.shape();
  const bool need_b = b.requires_grad();
  return record_op(out, "sub", {a, b}, [sa, sb, need_b](const Tensor& g) {
    return TensorList{sum_to(g, sa), need_b ? neg(sum_to(g, sb)) : Tensor()};
  }, where);
}

// out = a * b;  da = g * b, db = g * a
Tensor mul(const Tensor& a, const Tensor& b, std::source_location where) {
  Tensor out = binary_forward(a, b, "mul", [](auto x, auto y) { return x * y; });
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  Tensor a_saved = need_b ? a.detach() : Tensor(), b_saved = need_a ? b.detach() : Tensor();
  const Shape sa = a.shape(), sb = b.shape();
  return record_op(out, "mul", {a, b}, [=](const Tensor& g) {
    return TensorList{need_a ? sum_to(mul(g, b_saved), sa) : Tensor(),
                               need_b ? sum_to(mul(g, a_saved), sb) : Tensor()};
  }, where);
}

// out = a / b;  da = g / b, db = -g * a / b^2 = -g * out / b
Tensor div(const Tensor& a, const Tensor& b, std::source_location where) {
  Tensor out = binary_forward(a, b, "div", [](auto x, auto y) { return x / y; });
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  Tensor b_saved = b.detach(), out_saved = need_b ? out.detach() : Tensor();
  const Shape sa = a.shape(), sb = b.shape();
  return record_op(out, "div", {a, b}, [=](const Tensor& g) {
    Tensor g_over_b = div(g, b_saved);
    return TensorList{need_a ? sum_to(g_over_b, sa) : Tensor(),
                               need_b ? sum_to(neg(mul(g_over_b, out_saved)), sb) : Tensor()};
  }, where);
}

// ------------------------------------------------------------------------------------------- scalar
// out = x + s;  dx = g
Tensor add(const Tensor& x, double s, std::source_location where) {
  Tensor out = unary_forward(x, "add", [s](auto v) { return v + s; });
  return record_op(out, "add_scalar", {x}, [](const Tensor& g) { return TensorList{g}; }, where);
}

// out = x * s;  dx = g * s
Tensor mul(const Tensor& x, double s, std::source_location where) {
  Tensor out = unary_forward(x, "mul", [s](auto v) { return v * s; });
  return record_op(out, "mul_scalar", {x}, [s](const Tensor& g) { return TensorList{mul(g, s)}; }, where);
}

// out = s - x;  dx = -g
Tensor sub(double s, const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "sub", [s](auto v) { return s - v; });
  return record_op(out, "rsub_scalar", {x}, [](const Tensor& g) { return TensorList{neg(g)}; }, where);
}

// out = s / x;  dx = -g * s / x^2
Tensor div(double s, const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "div", [s](auto v) { return s / v; });
  Tensor xs = x.detach();
  return record_op(out, "rdiv_scalar", {x}, [s, xs](const Tensor& g) {
    return TensorList{grad_times(g, xs, [s](auto v) { return -s / (v * v); })};
  }, where);
}

// out = -x;  dx = -g
Tensor neg(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "neg", [](auto v) { return -v; });
  return record_op(out, "neg", {x}, [](const Tensor& g) { return TensorList{neg(g)}; }, where);
}

// out = x^p;  dx = g * p * x^(p-1)
Tensor pow(const Tensor& x, double p, std::source_location where) {
  Tensor out = unary_forward(x, "pow", [p](auto v) { return std::pow(v, p); });
  Tensor xs = x.detach();
  return record_op(out, "pow", {x}, [p, xs](const Tensor& g) {
    // p = 0: out is the constant 1, so dx = 0 everywhere (p * x^-1 would be 0 * inf = NaN at x = 0), as PyTorch.
    return TensorList{grad_times(g, xs, [p](auto v) { return p == 0 ? 0 * v : p * std::pow(v, p - 1); })};
  }, where);
}

// ------------------------------------------------------------------------------------------- math
// out = e^x;  dx = g * out
Tensor exp(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "exp", [](auto v) { return std::exp(v); });
  Tensor os = out.detach();
  return record_op(out, "exp", {x}, [os](const Tensor& g) { return TensorList{mul(g, os)}; }, where);
}

// out = ln x;  dx = g / x
Tensor log(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "log", [](auto v) { return std::log(v); });
  Tensor xs = x.detach();
  return record_op(out, "log", {x}, [xs](const Tensor& g) { return TensorList{div(g, xs)}; }, where);
}

// out = sqrt(x);  dx = g / (2 out)
Tensor sqrt(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "sqrt", [](auto v) { return std::sqrt(v); });
  Tensor os = out.detach();
  return record_op(out, "sqrt", {x}, [os](const Tensor& g) {
    return TensorList{grad_times(g, os, [](auto v) { return decltype(v)(0.5) / v; })};
  }, where);
}

// out = tanh x;  dx = g * (1 - out^2)
Tensor tanh(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "tanh", [](auto v) { return std::tanh(v); });
  Tensor os = out.detach();
  return record_op(out, "tanh", {x}, [os](const Tensor& g) {
    return TensorList{grad_times(g, os, [](auto v) { return 1 - v * v; })};
  }, where);
}

// out = 1 / (1 + e^-x);  dx = g * out * (1 - out)
Tensor sigmoid(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "sigmoid", [](auto v) {
    // Two branches so that e^(-v) never overflows.
    using T = decltype(v);
    if (v >= 0) return T(1) / (T(1) + std::exp(-v));
    const T e = std::exp(v);
    return e / (T(1) + e);
  });
  Tensor os = out.detach();
  return record_op(out, "sigmoid", {x}, [os](const Tensor& g) {
    return TensorList{grad_times(g, os, [](auto v) { return v * (1 - v); })};
  }, where);
}

// out = max(x, 0);  dx = g where x > 0, else 0  (the subgradient at 0 is 0, as PyTorch's)
Tensor relu(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "relu", [](auto v) { return v > 0 ? v : decltype(v)(0); });
  Tensor xs = x.detach();
  return record_op(out, "relu", {x}, [xs](const Tensor& g) { return TensorList{kernels::relu_grad(g, xs)}; }, where);
}

// out = x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2;  dx = g * (Phi(x) + x * phi(x)), phi = N(0,1) density
Tensor gelu(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "gelu", [](auto v) { return v * 0.5 * (1 + std::erf(v * std::numbers::sqrt2 / 2)); });
  Tensor xs = x.detach();
  return record_op(out, "gelu", {x}, [xs](const Tensor& g) {
    return TensorList{grad_times(g, xs, [](auto v) {
      const double cdf = 0.5 * (1 + std::erf(v * std::numbers::sqrt2 / 2));
      const double pdf = std::exp(-0.5 * v * v) * std::numbers::inv_sqrtpi / std::numbers::sqrt2;
      return cdf + v * pdf;
    })};
  }, where);
}

}  // namespace cppgrad
