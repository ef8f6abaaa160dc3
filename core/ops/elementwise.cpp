// Elementwise arithmetic. Binary ops broadcast; their backward sums the gradient back to each input's shape with
// sum_to. Derivatives are quoted beside each backward, and each backward is written in ops, so
// under create_graph it records a graph of its own and can be differentiated again. A rule that reads the op's
// result takes it as `out` from the engine (capturing it would be a reference cycle).
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "core/autograd.h"
#include "core/kernels/elementwise_loops.h"
#include "core/ops/elementwise.h"
#include "core/ops/elementwise_helpers.h"
#include "core/ops/reduce.h"
#include "core/ops/views.h"

namespace cppgrad {

using op_helpers::binary_forward;
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
  Tensor a_saved = need_b ? a : Tensor(), b_saved = need_a ? b : Tensor();
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
  const Shape sa = a.shape(), sb = b.shape();
  return record_op(out, "div", {a, b}, [=](const Tensor& g, const Tensor& out) {
    Tensor g_over_b = div(g, b);
    return TensorList{need_a ? sum_to(g_over_b, sa) : Tensor(),
                               need_b ? sum_to(neg(mul(g_over_b, out)), sb) : Tensor()};
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
  return record_op(out, "rdiv_scalar", {x}, [s, x](const Tensor& g) {
    return TensorList{mul(div(g, mul(x, x)), -s)};
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
  return record_op(out, "pow", {x}, [p, x](const Tensor& g) {
    // p = 0: out is the constant 1, so dx = 0 everywhere (p * x^-1 would be 0 * inf = NaN at x = 0), as PyTorch.
    return TensorList{p == 0 ? mul(g, 0.0) : mul(mul(g, pow(x, p - 1)), p)};
  }, where);
}

}  // namespace cppgrad
