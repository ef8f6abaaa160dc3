// softmax, log_softmax and cross_entropy. softmax and log_softmax are primitives: a loop over rows forward (each
// row's maximum subtracted first, so large logits never overflow; float32 rows on 8-lane vectors,
// core/kernels/softmax.h) and a backward rule in ops. cross_entropy is a composition: its definition is
// log_softmax, gather and a mean, and float32 takes a fused kernel instead. linear_cross_entropy is the language
// model head and its loss in one op, defined as the two ops (linear, then cross_entropy).
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/kernels/linear.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/softmax.h"
#include "core/ops/compare.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "core/precision.h"

namespace cppgrad {

namespace {
// x as contiguous rows [outer, n] along `dim` (a copy only when dim is not already last).
struct Rows {
  Tensor data;
  std::int64_t outer, n, dim;
};

Rows as_rows(const Tensor& x, std::int64_t dim, const char* op) {
  const std::int64_t d = normalize_dim(dim, x.dim(), op);
  if (x.dim() == 0) return {x.detach().reshape({1, 1}), 1, 1, 0};
  Tensor t = x.detach().transpose(d, -1).contiguous();
  const std::int64_t n = t.shape().back();
  return {t, n == 0 ? 0 : t.numel() / n, n, d};
}

// Undoes as_rows: rows [outer, n] back to the original shape and layout.
Tensor from_rows(const Tensor& rows, const Tensor& like, std::int64_t d) {
  if (like.dim() == 0) return rows.reshape({});
  Shape moved = like.shape();
  std::swap(moved[d], moved.back());
  return rows.reshape(moved).transpose(d, -1).contiguous();
}

template <typename T>
T row_max(const T* x, std::int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (std::int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

// row(in_row, out_row, n) for every row of a contiguous [outer, n] tensor, into a fresh [outer, n] tensor.
// Rows are independent, so threads split them when there are enough.
template <typename Row>
Tensor map_rows(const Tensor& in, std::int64_t outer, std::int64_t n, const char* op, Row row) {
  Tensor out = Tensor::empty({outer, n}, in.dtype());
  dispatch_floating(in.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* pin = in.data<T>();
    T* pout = out.mutable_data<T>();
    kernels::parallel_for(outer, outer * n > (1 << 15), [&](std::int64_t i) { row(pin + i * n, pout + i * n, n); });
  });
  return out;
}

// The one softmax row: y_j = e^(x_j - m) / sum_k e^(x_k - m), m the row's maximum. A row whose entries are all
// -inf (every key masked) has no distribution: zeros. float32 rows take kernels::softmax_row_f32x8, held equal to
// this one by the equality tests.
template <typename T>
void softmax_row(const T* x, T* y, std::int64_t n) {
  const T m = row_max(x, n);
  if (m == -std::numeric_limits<T>::infinity()) {
    for (std::int64_t j = 0; j < n; ++j) y[j] = 0;
    return;
  }
  T total = 0;
  for (std::int64_t j = 0; j < n; ++j) total += (y[j] = std::exp(x[j] - m));
  for (std::int64_t j = 0; j < n; ++j) y[j] /= total;
}

// y_j = x_j - m - log sum_k e^(x_k - m); a row of -inf (all masked) gives log 0 = -inf everywhere.
template <typename T>
void log_softmax_row(const T* x, T* y, std::int64_t n) {
  const T m = row_max(x, n);
  if (m == -std::numeric_limits<T>::infinity()) {
    for (std::int64_t j = 0; j < n; ++j) y[j] = m;
    return;
  }
  T total = 0;
  for (std::int64_t j = 0; j < n; ++j) total += std::exp(x[j] - m);
  const T lse = m + std::log(total);
  for (std::int64_t j = 0; j < n; ++j) y[j] = x[j] - lse;
}

// loss = mean over the valid rows i of -log_softmax(x_i)[t_i].  logits: [.., C]  target: [..]
Tensor cross_entropy_definition(const Tensor& logits, const Tensor& target, std::int64_t ignore_index,
                                std::int64_t valid) {
  const Tensor ignored = eq(target, static_cast<double>(ignore_index));         // [..] bool
  const Tensor t = masked_fill(target, ignored, 0.0).unsqueeze(-1);             // [.., 1]: ignored rows read class 0
  const Tensor picked = gather(log_softmax(logits, -1), -1, t).squeeze(-1);     // [..]
  return div(neg(sum(masked_fill(picked, ignored, 0.0))),                       // no valid row: 0 / 0 = NaN, as PyTorch
             Tensor::scalar(static_cast<double>(valid), logits.dtype()));
}

// Checks the arguments and counts the targets that are not ignore_index.
std::int64_t check_cross_entropy(const Shape& logits, const Tensor& target, std::int64_t ignore_index,
                                 const char* op = "cross_entropy") {
  if (logits.empty())
    throw std::invalid_argument(std::string(op) + ": logits need a class dim, got shape " + shape_str(logits));
  if (target.dtype() != DType::Int64)
    throw std::invalid_argument(std::string(op) + ": target must be int64 class indices, got " +
                                dtype_name(target.dtype()));
  const Shape expected(logits.begin(), logits.end() - 1);
  if (target.shape() != expected)
    throw std::invalid_argument(std::string(op) + ": target shape " + shape_str(target.shape()) +
                                " must equal the logits' shape without the class dim: logits " + shape_str(logits) +
                                " -> " + shape_str(expected));
  const std::int64_t C = logits.back();
  const Tensor t = target.contiguous();
  const std::int64_t* pt = t.data<std::int64_t>();
  std::int64_t valid = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    if (pt[i] == ignore_index) continue;
    if (pt[i] < 0 || pt[i] >= C)
      throw std::out_of_range(std::string(op) + ": target " + std::to_string(pt[i]) + " at position " +
                              std::to_string(i) + " is out of range for " + std::to_string(C) +
                              " classes (ignore_index is " + std::to_string(ignore_index) + ")");
    ++valid;
  }
  return valid;
}

// The fused kernels' backward, dlogits [N, C] = g/|valid| (p - onehot(t)): written over p when the rule runs once
// (autograd::rule_runs_once: nothing reads p after it), into a buffer of its own when the graph is kept.
Tensor dlogits(const Tensor& g, const Tensor& probs, const Tensor& t, std::int64_t ignore_index, std::int64_t valid) {
  return autograd::rule_runs_once() ? kernels::cross_entropy_backward_over_probs(g, probs, t, ignore_index, valid)
                                    : kernels::cross_entropy_backward(g, probs, t, ignore_index, valid);
}

}  // namespace

// y = softmax(x) along dim;  dx = y * (g - sum(g * y))  (sums along dim)
Tensor softmax(const Tensor& x, std::int64_t dim, std::source_location where) {
  Rows r = as_rows(x, dim, "softmax");
  const bool fast = fast_path(x);
  Tensor y = map_rows(r.data, r.outer, r.n, "softmax", [fast](const auto* xi, auto* yi, std::int64_t n) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*xi)>, float>)
      if (fast) return kernels::softmax_row_f32x8(xi, yi, n);
    softmax_row(xi, yi, n);
  });
  const std::int64_t d = r.dim;
  return record_op(from_rows(y, x, d), "softmax", {x}, [d](const Tensor& g, const Tensor& y) {
    return TensorList{mul(y, sub(g, sum(mul(g, y), {d}, /*keepdim=*/true)))};
  }, where);
}

// y = log_softmax(x) along dim;  dx = g - e^y * sum(g)  (sums along dim); 0 on rows with every entry masked
Tensor log_softmax(const Tensor& x, std::int64_t dim, std::source_location where) {
  Rows r = as_rows(x, dim, "log_softmax");
  Tensor y = map_rows(r.data, r.outer, r.n, "log_softmax",
                      [](const auto* xi, auto* yi, std::int64_t n) { log_softmax_row(xi, yi, n); });
  const std::int64_t d = r.dim;
  return record_op(from_rows(y, x, d), "log_softmax", {x}, [d](const Tensor& g, const Tensor& y) {
    const Tensor dx = sub(g, mul(exp(y), sum(g, {d}, /*keepdim=*/true)));
    if (y.numel() == 0) return TensorList{dx};
    const Tensor masked_rows = eq(max(y.detach(), d, /*keepdim=*/true), -std::numeric_limits<double>::infinity());
    return TensorList{masked_fill(dx, masked_rows, 0.0)};
  }, where);
}

// loss = (1/|valid|) sum_{i valid} -log_softmax(x_i)[t_i]: the definition above. The fused float32 kernel keeps the
// rows' softmax p_i from forward; its backward is dx_i = g/|valid| * (p_i - onehot(t_i)), written over p when the rule
// runs once (then no second [N, C] buffer is live as backward starts).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, std::int64_t ignore_index, std::source_location where) {
  const std::int64_t valid = check_cross_entropy(logits.shape(), target, ignore_index);
  if (!fast_path(logits) || logits.numel() == 0) return cross_entropy_definition(logits, target, ignore_index, valid);
  const std::int64_t C = logits.shape().back(), N = logits.numel() / C;
  const Tensor x = logits.detach().contiguous().reshape({N, C}), t = target.detach().contiguous().reshape({N});
  Tensor probs;  // [N, C]
  Tensor loss = kernels::cross_entropy_forward(x, t, ignore_index, valid, probs);
  return record_fused(loss, "cross_entropy", {logits},
                      [=](const TensorList& in) {
                        return cross_entropy_definition(in[0], target, ignore_index, valid);
                      },
                      [=, shape = logits.shape()](const Tensor& g) {
                        return TensorList{dlogits(g, probs, t, ignore_index, valid).reshape(shape)};
                      },
                      where);
}

// loss = cross_entropy(linear(x, W), target): a language model's head and its loss as one op. Written as the two ops,
// the graph holds the logits [N, V] (cross_entropy's input) and the probabilities cross_entropy keeps, both until
// backward reaches the head; at GPT-2's vocabulary those are a step's two largest tensors. The fused kernel computes
// the logits into one buffer, turns that into the rows' softmax in place and keeps it alone. Its values and
// gradients are the two ops' bits: the same kernels in the same order.
//   dlogits = g/|valid| (p - onehot(t)) (written over p when the rule runs once);  dx = dlogits W;  dW = dlogits^T x
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& target, std::int64_t ignore_index,
                            std::source_location where) {
  if (weight.dim() != 2 || x.dim() < 1 || x.shape().back() != weight.shape()[1] || weight.dtype() != x.dtype())
    throw std::invalid_argument("linear_cross_entropy: expected x [.., in] and weight [classes, in] of one dtype, got "
                                "x " + shape_str(x.shape()) + " " + dtype_name(x.dtype()) + " and weight " +
                                shape_str(weight.shape()) + " " + dtype_name(weight.dtype()));
  Shape logits_shape = x.shape();  // [.., V]
  logits_shape.back() = weight.shape()[0];
  const std::int64_t valid = check_cross_entropy(logits_shape, target, ignore_index, "linear_cross_entropy");
  const LinearPrecision precision = linear_precision();  // this call's, kept for its backward and its definition
  const auto definition = [target, ignore_index, precision](const TensorList& in) {
    const LinearPrecisionGuard same_precision(precision);
    return cross_entropy(linear(in[0], in[1]), target, ignore_index);
  };
  const std::int64_t N = target.numel(), V = logits_shape.back();
  if (!fast_path(x) || N * V == 0) return definition({x, weight});
  const Tensor t = target.detach().contiguous().reshape({N});
  const Tensor probs = kernels::linear_forward(x, weight, Tensor(), false, precision).reshape({N, V});  // the logits
  Tensor loss = kernels::cross_entropy_forward_in_place(probs, t, ignore_index, valid);             // now the softmax
  return record_fused(loss, "linear_cross_entropy", {x, weight}, definition,
                      [=](const Tensor& g) {
                        const auto [dx, dw, unused] =
                            kernels::linear_backward(dlogits(g, probs, t, ignore_index, valid).reshape(logits_shape),
                                                     x, weight, x.requires_grad(), weight.requires_grad(), false,
                                                     precision);
                        return TensorList{dx, dw};
                      },
                      where);
}

}  // namespace cppgrad
