// softmax, log_softmax and cross_entropy: row kernels over the normalised dim, made the last, contiguous one.
// Each subtracts the row maximum before exponentiating, so large logits never overflow.
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "core/kernels/exp.h"
#include "core/kernels/parallel_for.h"
#include "core/ops.h"

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
    T* pout = out.data<T>();
    kernels::parallel_for(outer, outer * n > (1 << 15), [&](std::int64_t i) { row(pin + i * n, pout + i * n, n); });
  });
  return out;
}

// The backward of a row-wise op whose rule reads its own output y ([outer, n]): brings g into row layout,
// applies row(y_row, g_row, dx_row, n) per row, and returns dx in the layout of the op's input `like`.
template <typename Row>
Tensor rows_backward(const Tensor& g, const Tensor& y, const Tensor& like, std::int64_t d, const char* op, Row row) {
  const std::int64_t outer = y.shape()[0], n = y.shape()[1];
  Rows gr = as_rows(g, d, op);
  Tensor gx = Tensor::empty({outer, n}, g.dtype());
  dispatch_floating(g.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* py = y.data<T>();
    const T* pg = gr.data.data<T>();
    T* po = gx.data<T>();
    for (std::int64_t i = 0; i < outer; ++i) row(py + i * n, pg + i * n, po + i * n, n);
  });
  return from_rows(gx, like, d);
}

// Float rows run in chunks of 8 lanes, one kernels::f32x8 value each, the last chunk padded with -inf (weight
// 0): every loop has a compile-time width and becomes a few vector instructions, with no loop set-up or scalar
// remainder, which matters for attention's rows of 8 keys (1 to 9 while decoding). The sums are taken lane by
// lane and then across lanes in a fixed order, so results are reproducible.
void softmax_row(const float* xi, float* yi, std::int64_t n) {
  using kernels::f32x8;
  constexpr float minus_inf = -std::numeric_limits<float>::infinity();
  const std::int64_t full = n / 8, rest = n % 8, chunks = full + (rest ? 1 : 0);
  auto load = [&](std::int64_t c) {
    f32x8 v;
    if (c < full) {
      std::memcpy(&v, xi + c * 8, sizeof v);
    } else {
      float lanes[8];
      for (std::int64_t e = 0; e < 8; ++e) lanes[e] = e < rest ? xi[c * 8 + e] : minus_inf;
      std::memcpy(&v, lanes, sizeof v);
    }
    return v;
  };
  f32x8 chunk_max = f32x8{} + minus_inf;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const f32x8 v = load(c);
    chunk_max = v > chunk_max ? v : chunk_max;
  }
  float m = minus_inf;
  for (int e = 0; e < 8; ++e) m = chunk_max[e] > m ? chunk_max[e] : m;
  if (m == minus_inf) {  // every entry masked: no distribution, all zeros
    for (std::int64_t j = 0; j < n; ++j) yi[j] = 0;
    return;
  }
  f32x8 sums{};
  for (std::int64_t c = 0; c < chunks; ++c) {
    const f32x8 v = load(c);
    const f32x8 ev = kernels::exp_f32x8(v - m);
    const f32x8 w = v == minus_inf ? f32x8{} : ev;  // masked entries: exactly 0
    sums += w;
    if (c < full) {
      std::memcpy(yi + c * 8, &w, sizeof w);
    } else {
      float lanes[8];
      std::memcpy(lanes, &w, sizeof w);
      for (std::int64_t e = 0; e < rest; ++e) yi[c * 8 + e] = lanes[e];
    }
  }
  const float total = kernels::lane_total(sums);
  const float inv = 1.0f / total;
  for (std::int64_t j = 0; j < n; ++j) yi[j] *= inv;
}

// Double rows (gradient checks, parity): libm's exp, plain loops.
void softmax_row(const double* xi, double* yi, std::int64_t n) {
  const double m = row_max(xi, n);
  if (m == -std::numeric_limits<double>::infinity()) {  // every entry masked: no distribution, all zeros
    for (std::int64_t j = 0; j < n; ++j) yi[j] = 0;
    return;
  }
  double total = 0;
  for (std::int64_t j = 0; j < n; ++j) total += (yi[j] = std::exp(xi[j] - m));
  const double inv = 1.0 / total;
  for (std::int64_t j = 0; j < n; ++j) yi[j] *= inv;
}

}  // namespace

// y_j = e^(x_j - m) / sum_k e^(x_k - m);  dx = y * (g - sum_k g_k y_k)
Tensor softmax(const Tensor& x, std::int64_t dim, std::source_location where) {
  Rows r = as_rows(x, dim, "softmax");
  Tensor y = map_rows(r.data, r.outer, r.n, "softmax",
                      [](const auto* xi, auto* yi, std::int64_t n) { softmax_row(xi, yi, n); });
  const std::int64_t d = r.dim;
  return record_op(from_rows(y, x, d), "softmax", {x}, [y, d, like = x.detach()](const Tensor& g) {
    return TensorList{rows_backward(g, y, like, d, "softmax backward",
                                             [](const auto* yi, const auto* gi, auto* dxi, std::int64_t n) {
                                               std::remove_cvref_t<decltype(*yi)> dot = 0;
                                               for (std::int64_t j = 0; j < n; ++j) dot += gi[j] * yi[j];
                                               for (std::int64_t j = 0; j < n; ++j) dxi[j] = yi[j] * (gi[j] - dot);
                                             })};
  }, where);
}

// y_j = x_j - m - log sum_k e^(x_k - m);  dx = g - softmax(x) * sum_k g_k
Tensor log_softmax(const Tensor& x, std::int64_t dim, std::source_location where) {
  Rows r = as_rows(x, dim, "log_softmax");
  Tensor y = map_rows(r.data, r.outer, r.n, "log_softmax", [](const auto* xi, auto* yi, std::int64_t n) {
    using T = std::remove_cvref_t<decltype(*xi)>;
    const T m = row_max(xi, n);
    if (m == -std::numeric_limits<T>::infinity()) {  // every entry masked: log 0 everywhere
      for (std::int64_t j = 0; j < n; ++j) yi[j] = m;
      return;
    }
    T total = 0;
    for (std::int64_t j = 0; j < n; ++j) total += std::exp(xi[j] - m);
    const T lse = m + std::log(total);
    for (std::int64_t j = 0; j < n; ++j) yi[j] = xi[j] - lse;
  });
  const std::int64_t d = r.dim;
  return record_op(from_rows(y, x, d), "log_softmax", {x}, [y, d, like = x.detach()](const Tensor& g) {
    return TensorList{rows_backward(g, y, like, d, "log_softmax backward",
                                             [](const auto* yi, const auto* gi, auto* dxi, std::int64_t n) {
                                               using T = std::remove_cvref_t<decltype(*yi)>;
                                               if (n > 0 && row_max(yi, n) == -std::numeric_limits<T>::infinity()) {
                                                 for (std::int64_t j = 0; j < n; ++j) dxi[j] = 0;  // fully masked: no gradient
                                                 return;
                                               }
                                               T total = 0;
                                               for (std::int64_t j = 0; j < n; ++j) total += gi[j];
                                               for (std::int64_t j = 0; j < n; ++j) dxi[j] = gi[j] - std::exp(yi[j]) * total;
                                             })};
  }, where);
}

// loss = (1/|valid|) sum_{i valid} (logsumexp(x_i) - x_i[t_i]);  dx_i = g/|valid| * (softmax(x_i) - onehot(t_i))
Tensor cross_entropy(const Tensor& logits, const Tensor& target, std::int64_t ignore_index, std::source_location where) {
  if (logits.dim() < 1)
    throw std::invalid_argument("cross_entropy: logits need a class dim, got shape " + shape_str(logits.shape()));
  if (target.dtype() != DType::Int64)
    throw std::invalid_argument(std::string("cross_entropy: target must be int64 class indices, got ") +
                                dtype_name(target.dtype()));
  const Shape expected(logits.shape().begin(), logits.shape().end() - 1);
  if (target.shape() != expected)
    throw std::invalid_argument("cross_entropy: target shape " + shape_str(target.shape()) +
                                " must equal the logits' shape without the class dim: logits " +
                                shape_str(logits.shape()) + " -> " + shape_str(expected));
  const std::int64_t C = logits.shape().back();
  Tensor x = logits.detach().contiguous();
  const std::int64_t N = C == 0 ? 0 : x.numel() / C;
  Tensor t = target.detach().contiguous();
  const std::int64_t* pt = t.data<std::int64_t>();
  std::int64_t valid = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    if (pt[i] == ignore_index) continue;
    if (pt[i] < 0 || pt[i] >= C)
      throw std::out_of_range("cross_entropy: target " + std::to_string(pt[i]) + " at position " + std::to_string(i) +
                              " is out of range for " + std::to_string(C) + " classes (ignore_index is " +
                              std::to_string(ignore_index) + ")");
    ++valid;
  }
  // Softmax rows are kept for backward: p_i = softmax(x_i).
  Tensor probs = Tensor::empty({N, C}, x.dtype());
  Tensor loss = Tensor::empty({}, x.dtype());
  dispatch_floating(x.dtype(), "cross_entropy", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* pp = probs.data<T>();
    double total = 0;
    for (std::int64_t i = 0; i < N; ++i) {
      const T* xi = px + i * C;
      const T m = row_max(xi, C);
      T s = 0;
      for (std::int64_t j = 0; j < C; ++j) s += (pp[i * C + j] = std::exp(xi[j] - m));
      for (std::int64_t j = 0; j < C; ++j) pp[i * C + j] /= s;
      if (pt[i] != ignore_index) total += static_cast<double>(m + std::log(s) - xi[pt[i]]);
    }
    // The mean over no target is 0 / 0: NaN, as PyTorch gives (its gradient is zero: no target pulls on x).
    *loss.data<T>() = static_cast<T>(valid == 0 ? std::nan("") : total / static_cast<double>(valid));
  });
  const Shape shape = logits.shape();
  return record_op(loss, "cross_entropy", {logits}, [=](const Tensor& g) {
    const std::int64_t* pt = t.data<std::int64_t>();  // t is captured, so the targets stay alive
    Tensor gx = Tensor::zeros({N, C}, g.dtype());
    if (valid > 0) {
      dispatch_floating(g.dtype(), "cross_entropy backward", [&](auto tag) {
        using T = decltype(tag);
        const T scale = static_cast<T>(g.item() / static_cast<double>(valid));
        const T* pp = probs.data<T>();
        T* po = gx.data<T>();
        for (std::int64_t i = 0; i < N; ++i) {
          if (pt[i] == ignore_index) continue;
          for (std::int64_t j = 0; j < C; ++j) po[i * C + j] = scale * pp[i * C + j];
          po[i * C + pt[i]] -= scale;
        }
      });
    }
    return TensorList{gx.reshape(shape)};
  }, where);
}

}  // namespace cppgrad
