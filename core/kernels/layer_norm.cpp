#include "core/kernels/layer_norm.h"

#include <algorithm>
#include <cmath>

#include "core/kernels/parallel_for.h"
#include "core/kernels/simd.h"
#include "core/kernels/tensor_values.h"

namespace cppgrad::kernels {

namespace {

// The forward of float rows a whole number of 8-lane vectors wide (the reversal model's 32), in registers: the
// same three steps as the plain loops below, summed lane-wise and then across lanes. The plain loop (any width) is the
// general case; the equality tests hold both equal to the definition in core/ops/layer_norm.cpp.
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

// Any width: the same three steps in plain loops (omp simd reductions: vectorised, with a lane order fixed at
// compile time, so reproducible).
void layer_norm_row(const FloatRows& p, std::int64_t i) {
  const float* xi = p.x + i * p.D;
  const std::int64_t D = p.D;
  float mu = 0;
#pragma omp simd reduction(+ : mu)
  for (std::int64_t j = 0; j < D; ++j) mu += xi[j];
  mu /= static_cast<float>(D);
  float var = 0;
#pragma omp simd reduction(+ : var)
  for (std::int64_t j = 0; j < D; ++j) var += (xi[j] - mu) * (xi[j] - mu);
  var /= static_cast<float>(D);
  const float r = 1.0f / std::sqrt(var + p.eps);
  if (p.rstd) p.rstd[i] = r;
  float* yi = p.y + i * D;
  for (std::int64_t j = 0; j < D; ++j) {
    const float h = (xi[j] - mu) * r;
    if (p.xhat) p.xhat[i * D + j] = h;
    yi[j] = h * (p.w ? p.w[j] : 1.0f) + (p.b ? p.b[j] : 0.0f);
  }
}

}  // namespace

Tensor layer_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, double eps, LayerNormSaved* saved) {
  const std::int64_t D = x.shape().back(), N = D == 0 ? 0 : x.numel() / D;
  const Tensor xc = contiguous_values(x);
  const Tensor wc = w.defined() ? contiguous_values(w) : Tensor(), bc = b.defined() ? contiguous_values(b) : Tensor();
  Tensor y = Tensor::empty(x.shape(), DType::Float32);
  if (saved) *saved = {Tensor::empty({N, D}, DType::Float32), Tensor::empty({N}, DType::Float32)};
  const FloatRows rows{xc.data<float>(), wc.defined() ? wc.data<float>() : nullptr,
                       bc.defined() ? bc.data<float>() : nullptr, D, static_cast<float>(eps), y.mutable_data<float>(),
                       saved ? saved->xhat.mutable_data<float>() : nullptr, saved ? saved->rstd.mutable_data<float>() : nullptr};
  // Groups of 8 rows, split across threads when worth it; rows of whole vectors take the register path.
  parallel_for((N + 7) / 8, N * D > (1 << 15), [&](std::int64_t group) {
    const FloatRows p = rows;  // a local copy: the compiler may keep its fields in registers across the stores to y
    const std::int64_t i0 = group * 8, i1 = std::min(N, i0 + 8);
    if (D % 8 == 0 && i1 - i0 == 8) return layer_norm_8_rows_f32x8(p, i0);
    for (std::int64_t i = i0; i < i1; ++i) D % 8 == 0 ? layer_norm_row_f32x8(p, i) : layer_norm_row(p, i);
  });
  return y;
}

std::array<Tensor, 3> layer_norm_backward(const Tensor& g, const LayerNormSaved& saved, const Tensor& w, bool need_x,
                                          bool need_w, bool need_b) {
  const std::int64_t N = saved.xhat.shape()[0], D = saved.xhat.shape()[1];
  const Tensor gc = g.contiguous(), wc = w.defined() ? contiguous_values(w) : Tensor();
  Tensor dx = need_x ? Tensor::empty({N, D}, DType::Float32) : Tensor();
  Tensor dw = Tensor::zeros({D}, DType::Float32), db = Tensor::zeros({D}, DType::Float32);
  const float *pg = gc.data<float>(), *ph = saved.xhat.data<float>(), *pr = saved.rstd.data<float>();
  const float* pw = wc.defined() ? wc.data<float>() : nullptr;
  float *pdw = dw.mutable_data<float>(), *pdb = db.mutable_data<float>(), *pdx = need_x ? dx.mutable_data<float>() : nullptr;
  // dh is recomputed where needed rather than kept in a buffer (one multiply against a heap block per call).
  auto dh = [pw](const float* gi, std::int64_t j) { return gi[j] * (pw ? pw[j] : 1.0f); };
  for (std::int64_t i = 0; i < N; ++i) {
    const float *gi = pg + i * D, *hi = ph + i * D;
    float mean_dh = 0, mean_dh_h = 0;
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
    mean_dh /= static_cast<float>(D);
    mean_dh_h /= static_cast<float>(D);
    if (!need_x) continue;
    float* dxi = pdx + i * D;
#pragma omp simd
    for (std::int64_t j = 0; j < D; ++j) dxi[j] = pr[i] * (dh(gi, j) - mean_dh - hi[j] * mean_dh_h);
  }
  return {need_x ? dx.reshape(gc.shape()) : Tensor(), need_w ? dw : Tensor(), need_b ? db : Tensor()};
}

}  // namespace cppgrad::kernels
