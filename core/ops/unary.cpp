// Unary math, elementwise: x: (..) -> (..). Each forward runs one lambda over raw memory (unary_forward, in the
// input's dtype); each backward is written in ops and quoted beside it, so under create_graph it records a graph of
// its own and can be differentiated again. A rule that reads the op's result takes it as `out` from the engine
// (capturing it would be a reference cycle).
#include <cmath>
#include <numbers>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/kernels/gelu.h"
#include "core/ops/compare.h"
#include "core/ops/elementwise.h"
#include "core/ops/elementwise_helpers.h"
#include "core/ops/select.h"
#include "core/ops/unary.h"

namespace cppgrad {

using op_helpers::unary_forward;

// out = e^x;  dx = g * out
Tensor exp(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "exp", [](auto v) { return std::exp(v); });
  return record_op(out, "exp", {x}, [](const Tensor& g, const Tensor& out) { return TensorList{mul(g, out)}; }, where);
}

// out = ln x;  dx = g / x
Tensor log(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "log", [](auto v) { return std::log(v); });
  return record_op(out, "log", {x}, [x](const Tensor& g) { return TensorList{div(g, x)}; }, where);
}

// out = sqrt(x);  dx = g / (2 out)
Tensor sqrt(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "sqrt", [](auto v) { return std::sqrt(v); });
  return record_op(out, "sqrt", {x}, [](const Tensor& g, const Tensor& out) {
    return TensorList{div(g, mul(out, 2.0))};
  }, where);
}

// out = tanh x;  dx = g * (1 - out^2)
Tensor tanh(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "tanh", [](auto v) { return std::tanh(v); });
  return record_op(out, "tanh", {x}, [](const Tensor& g, const Tensor& out) {
    return TensorList{mul(g, sub(1.0, mul(out, out)))};
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
  return record_op(out, "sigmoid", {x}, [](const Tensor& g, const Tensor& out) {
    return TensorList{mul(g, mul(out, sub(1.0, out)))};
  }, where);
}

// out = max(x, 0);  dx = g where x > 0, else 0  (the subgradient at 0 is 0, as PyTorch's)
Tensor relu(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "relu", [](auto v) { return v > 0 ? v : decltype(v)(0); });
  return record_op(out, "relu", {x}, [x](const Tensor& g) {
    return TensorList{cppgrad::where(gt(x, 0.0), g, Tensor::zeros({}, g.dtype()))};
  }, where);
}

// out = x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2;  dx = g * (Phi(x) + x * phi(x)), phi = N(0,1) density
Tensor gelu(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "gelu", [](auto v) { return v * 0.5 * (1 + std::erf(v * std::numbers::sqrt2 / 2)); });
  return record_op(out, "gelu", {x}, [x](const Tensor& g) {
    const Tensor cdf = mul(add(erf(mul(x, 1 / std::numbers::sqrt2)), 1.0), 0.5);
    const Tensor pdf = mul(exp(mul(mul(x, x), -0.5)), std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    return TensorList{mul(g, add(cdf, mul(x, pdf)))};
  }, where);
}

// out = x/2 (1 + t), t = tanh(u), u = c (x + a x^3), c = sqrt(2/pi), a = 0.044715 (GPT-2's GELU);
// dx = g * (0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2))
namespace {

constexpr double kGeluC = std::numbers::sqrt2 * std::numbers::inv_sqrtpi, kGeluA = 0.044715;

Tensor gelu_tanh_definition(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "gelu_tanh", [](auto v) { return 0.5 * v * (1 + std::tanh(kGeluC * (v + kGeluA * v * v * v))); });
  return record_op(out, "gelu_tanh", {x}, [x](const Tensor& g) {
    const Tensor x2 = mul(x, x);
    const Tensor t = tanh(mul(mul(x, add(mul(x2, kGeluA), 1.0)), kGeluC));  // tanh(c (x + a x^3))
    const Tensor sech2 = add(neg(mul(t, t)), 1.0);                          // 1 - t^2
    const Tensor du = mul(add(mul(x2, 3 * kGeluA), 1.0), kGeluC);           // du/dx = c (1 + 3 a x^2)
    return TensorList{mul(g, mul(add(add(t, 1.0), mul(mul(x, sech2), du)), 0.5))};
  }, where);
}

}  // namespace

// float32 takes the fused kernel (core/kernels/gelu.h): one pass over memory forward and one backward, where the
// definition's backward makes nine passes and nine tensors of the MLP's largest activation, [B, T, 4C].
Tensor gelu_tanh(const Tensor& x, std::source_location where) {
  if (!fast_path(x)) return gelu_tanh_definition(x, where);
  Tensor out = kernels::gelu_tanh_forward(x);
  return record_fused(out, "gelu_tanh", {x},
                      [where](const TensorList& in) { return gelu_tanh_definition(in[0], where); },
                      [x](const Tensor& g) { return TensorList{kernels::gelu_tanh_backward(g, x)}; }, where);
}

// out = erf x;  dx = g * 2/sqrt(pi) * e^(-x^2)
Tensor erf(const Tensor& x, std::source_location where) {
  Tensor out = unary_forward(x, "erf", [](auto v) { return std::erf(v); });
  return record_op(out, "erf", {x}, [x](const Tensor& g) {
    return TensorList{mul(g, mul(exp(neg(mul(x, x))), 2 * std::numbers::inv_sqrtpi))};
  }, where);
}

}  // namespace cppgrad
