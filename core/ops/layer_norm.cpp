// Layer normalisation over the last dim, fused: forward keeps exactly what backward needs (per-row mean and
// 1/std, as llm.c's layernorm_forward), and backward is the closed form below rather than a chain of ops.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "core/kernels/simd.h"
#include "core/kernels/parallel_for.h"
#include "core/ops.h"

namespace cppgrad {

namespace {

// The forward of float rows a whole number of 8-lane vectors wide (the reversal model's 32), in registers: the
// same three steps as the plain loops below, summed lane-wise and then across lanes. The plain loops (any width, and
// float64) are their reference; OpValues.FloatLayerNormMatchesFloat64 holds them equal.
struct FloatRows {
  const float *x, *w, *b;  // x: [rows, D]; w, b: [D] or null
  std::int64_t D;
  float eps;
  float *y, *xhat, *rstd;  // y: [rows, D]; xhat: [rows, D] and rstd: [rows], or null when backward will not run
};

[[gnu::always_inline]] inline void normalise_row(const FloatRows& p, std::int64_t i, float mu, float r) {
  using kernels::f32x8, kernels::load8, kernels::store8;
  for (std::int64_t c = 0; c < p.D; c += 8) {
    const f32x8 h = (load8(p.x + i * p.D + c) - mu) * r;
    if (p.xhat) store8(p.xhat + i * p.D + c, h);
    store8(p.y + i * p.D + c, h * (p.w ? load8(p.w + c) : f32x8{} + 1.0f) + (p.b ? load8(p.b + c) : f32x8{}));
  }
  if (p.rstd) p.rstd[i] = r;
}

void layer_norm_row_f32x8(const FloatRows& p, std::int64_t i) {
  using kernels::f32x8, kernels::load8;
  const float* x = p.x + i * p.D;
  const auto D = static_cast<float>(p.D);
  f32x8 sum{};
  for (std::int64_t c = 0; c < p.D; c += 8) sum += load8(x + c);
  const float mu = kernels::lane_total(sum) / D;
  f32x8 sq{};
  for (std::int64_t c = 0; c < p.D; c += 8) {
    const f32x8 d = load8(x + c) - mu;
    sq += d * d;
  }
  normalise_row(p, i, mu, 1.0f / std::sqrt(kernels::lane_total(sq) / D + p.eps));
}

// Rows [i0, i0 + 8) at once: their eight sums across lanes come from one lane_sums (the same order as lane_total,
// so the same bits as row by row), and the eight rows' dependent chains (mean, variance, square root) overlap.
void layer_norm_8_rows_f32x8(const FloatRows& p, std::int64_t i0) {
  using kernels::f32x8, kernels::load8;
  const auto D = static_cast<float>(p.D);
  // The loops over the 8 rows are unrolled so each row's sum stays in a register of its own (rolled, GCC kept the
  // array on the stack and zeroed it with rep stos: a fifth of the function).
  const float* x = p.x + i0 * p.D;
  f32x8 sums[8];
#pragma GCC unroll 8
  for (int r = 0; r < 8; ++r) sums[r] = f32x8{};
  for (std::int64_t c = 0; c < p.D; c += 8)
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) sums[r] += load8(x + r * p.D + c);
  float mu[8], var[8];
  kernels::store8(mu, kernels::lane_sums(sums) / D);
#pragma GCC unroll 8
  for (int r = 0; r < 8; ++r) sums[r] = f32x8{};
  for (std::int64_t c = 0; c < p.D; c += 8)
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) {
      const f32x8 d = load8(x + r * p.D + c) - mu[r];
      sums[r] += d * d;
    }
  kernels::store8(var, kernels::lane_sums(sums) / D);
#pragma GCC unroll 8
  for (int r = 0; r < 8; ++r) normalise_row(p, i0 + r, mu[r], 1.0f / std::sqrt(var[r] + p.eps));
}

}  // namespace

// x: (.., D)  weight, bias: (D) or undefined -> (.., D)
// Per row: mu = mean(x), rstd = 1/sqrt(var(x) + eps) (biased variance, as PyTorch), xhat = (x - mu) * rstd,
// y = xhat * weight + bias.
// Backward, with dxhat = g * weight:
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
//   dweight = sum over rows of g * xhat,  dbias = sum over rows of g
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, std::source_location where) {
  if (x.dim() < 1) throw std::invalid_argument("layer_norm: input needs at least one dim, got a scalar");
  const std::int64_t D = x.shape().back();
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    if (p->shape() != Shape{D})
      throw std::invalid_argument("layer_norm: " + std::string(p == &weight ? "weight" : "bias") + " has shape " +
                                  shape_str(p->shape()) + " but must be [" + std::to_string(D) + "] for input " +
                                  shape_str(x.shape()));
    if (p->dtype() != x.dtype())
      throw std::invalid_argument(std::string("layer_norm: dtype mismatch: input is ") + dtype_name(x.dtype()) +
                                  ", " + (p == &weight ? "weight" : "bias") + " is " + dtype_name(p->dtype()));
  }
  const std::int64_t N = D == 0 ? 0 : x.numel() / D;
  Tensor xc = x.detach().contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  // What backward reads; not kept when there will be no backward (evaluation, decoding).
  const bool keep = needs_graph({&x, &weight, &bias});
  Tensor xhat = keep ? Tensor::empty({N, D}, x.dtype()) : Tensor();
  Tensor rstd = keep ? Tensor::empty({N}, x.dtype()) : Tensor();
  Tensor w = weight.defined() ? weight.detach().contiguous() : Tensor();
  Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  dispatch_floating(x.dtype(), "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* px = xc.data<T>();
    const T* pw = w.defined() ? w.data<T>() : nullptr;
    const T* pb = b.defined() ? b.data<T>() : nullptr;
    T* py = y.data<T>();
    T* ph = keep ? xhat.data<T>() : nullptr;
    T* pr = keep ? rstd.data<T>() : nullptr;
    // Row sums use omp simd reductions: vectorised, with a lane order fixed at compile time (reproducible).
    auto row = [&](std::int64_t i) {
      const T* xi = px + i * D;
      T mu = 0;
#pragma omp simd reduction(+ : mu)
      for (std::int64_t j = 0; j < D; ++j) mu += xi[j];
      mu /= static_cast<T>(D);
      T var = 0;
#pragma omp simd reduction(+ : var)
      for (std::int64_t j = 0; j < D; ++j) var += (xi[j] - mu) * (xi[j] - mu);
      var /= static_cast<T>(D);
      const T r = T(1) / std::sqrt(var + static_cast<T>(eps));
      if (pr) pr[i] = r;
      T* yi = py + i * D;
      if (pw && pb) {
#pragma omp simd
        for (std::int64_t j = 0; j < D; ++j) yi[j] = (xi[j] - mu) * r * pw[j] + pb[j];
      } else {
        for (std::int64_t j = 0; j < D; ++j) yi[j] = (xi[j] - mu) * r * (pw ? pw[j] : T(1)) + (pb ? pb[j] : T(0));
      }
      if (ph) {
#pragma omp simd
        for (std::int64_t j = 0; j < D; ++j) ph[i * D + j] = (xi[j] - mu) * r;
      }
    };
    // Groups of 8 rows, split across threads when worth it; float rows of whole vectors take the register path.
    kernels::parallel_for((N + 7) / 8, N * D > (1 << 15), [&](std::int64_t g) {
      const std::int64_t i0 = g * 8, i1 = std::min(N, i0 + 8);
      if constexpr (std::is_same_v<T, float>) {
        if (D % 8 == 0) {
          const FloatRows rows{px, pw, pb, D, static_cast<float>(eps), py, ph, pr};
          if (i1 - i0 == 8) return layer_norm_8_rows_f32x8(rows, i0);
          for (std::int64_t i = i0; i < i1; ++i) layer_norm_row_f32x8(rows, i);
          return;
        }
      }
      for (std::int64_t i = i0; i < i1; ++i) row(i);
    });
  });
  return record_op(y, "layer_norm", {x, weight, bias}, [=, need_x = x.requires_grad()](const Tensor& g) {
    Tensor gc = g.contiguous();
    Tensor dx = need_x ? Tensor::empty({N, D}, g.dtype()) : Tensor();
    Tensor dw = Tensor::zeros({D}, g.dtype()), db = Tensor::zeros({D}, g.dtype());
    dispatch_floating(g.dtype(), "layer_norm backward", [&](auto tag) {
      using T = decltype(tag);
      const T *pg = gc.data<T>(), *ph = xhat.data<T>(), *pr = rstd.data<T>();
      const T* pw = w.defined() ? w.data<T>() : nullptr;
      T *pdw = dw.data<T>(), *pdb = db.data<T>();
      // dh = g * w;  dx = rstd * (dh - mean(dh) - xhat * mean(dh * xhat));  dw += g * xhat;  db += g
      // dh is recomputed where needed rather than kept in a buffer (one multiply against a heap block per call).
      auto dh = [pw](const T* gi, std::int64_t j) { return gi[j] * (pw ? pw[j] : T(1)); };
      for (std::int64_t i = 0; i < N; ++i) {
        const T *gi = pg + i * D, *hi = ph + i * D;
        T mean_dh = 0, mean_dh_h = 0;
#pragma omp simd reduction(+ : mean_dh, mean_dh_h)
        for (std::int64_t j = 0; j < D; ++j) {
          mean_dh += dh(gi, j);
          mean_dh_h += dh(gi, j) * hi[j];
        }
#pragma omp simd
        for (std::int64_t j = 0; j < D; ++j) {
          pdw[j] += gi[j] * hi[j];
          pdb[j] += gi[j];
        }
        mean_dh /= static_cast<T>(D);
        mean_dh_h /= static_cast<T>(D);
        if (!need_x) continue;
        T* dxi = dx.data<T>() + i * D;
#pragma omp simd
        for (std::int64_t j = 0; j < D; ++j) dxi[j] = pr[i] * (dh(gi, j) - mean_dh - hi[j] * mean_dh_h);
      }
    });
    return TensorList{need_x ? dx.reshape(gc.shape()) : Tensor(), w.defined() ? dw : Tensor(),
                               b.defined() ? db : Tensor()};
  }, where);
}

}  // namespace cppgrad
