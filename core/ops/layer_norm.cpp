// Layer normalisation over the last dim, fused: forward keeps exactly what backward needs (per-row mean and
// 1/std, as llm.c's layernorm_forward), and backward is the closed form below rather than a chain of ops.
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "core/kernels/exp.h"
#include "core/kernels/parallel_for.h"
#include "core/ops.h"

namespace cppgrad {

namespace {

// The forward of one float row a whole number of 8-lane vectors wide (the reversal model's 32): the same three
// steps as the loops below, in registers, summed lane-wise and then across lanes. The plain loops (any width, and
// float64) are its reference; OpValues.FloatLayerNormMatchesFloat64 holds them equal.
void layer_norm_row_float8(const float* x, const float* w, const float* b, std::int64_t D, float eps, float* y,
                           float* xhat, float* rstd) {
  using kernels::float8;
  auto load = [](const float* p) {
    float8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  auto lane_total = [](float8 v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); };
  const std::int64_t vecs = D / 8;
  float8 sum{};
  for (std::int64_t c = 0; c < vecs; ++c) sum += load(x + 8 * c);
  const float mu = lane_total(sum) / static_cast<float>(D);
  float8 sq{};
  for (std::int64_t c = 0; c < vecs; ++c) {
    const float8 d = load(x + 8 * c) - mu;
    sq += d * d;
  }
  const float r = 1.0f / std::sqrt(lane_total(sq) / static_cast<float>(D) + eps);
  if (rstd) *rstd = r;
  for (std::int64_t c = 0; c < vecs; ++c) {
    const float8 h = (load(x + 8 * c) - mu) * r;
    if (xhat) std::memcpy(xhat + 8 * c, &h, sizeof h);
    const float8 out = h * (w ? load(w + 8 * c) : float8{} + 1.0f) + (b ? load(b + 8 * c) : float8{});
    std::memcpy(y + 8 * c, &out, sizeof out);
  }
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
    kernels::parallel_for(N, N * D > (1 << 15), [&](std::int64_t i) {
      const T* xi = px + i * D;
      if constexpr (std::is_same_v<T, float>) {
        if (D % 8 == 0)
          return layer_norm_row_float8(xi, pw, pb, D, static_cast<float>(eps), py + i * D, ph ? ph + i * D : nullptr,
                                       pr ? pr + i : nullptr);
      }
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
      std::vector<T> dh(static_cast<std::size_t>(D));
      for (std::int64_t i = 0; i < N; ++i) {
        const T *gi = pg + i * D, *hi = ph + i * D;
        T mean_dh = 0, mean_dh_h = 0;
#pragma omp simd reduction(+ : mean_dh, mean_dh_h)
        for (std::int64_t j = 0; j < D; ++j) {
          dh[j] = gi[j] * (pw ? pw[j] : T(1));
          mean_dh += dh[j];
          mean_dh_h += dh[j] * hi[j];
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
        for (std::int64_t j = 0; j < D; ++j) dxi[j] = pr[i] * (dh[j] - mean_dh - hi[j] * mean_dh_h);
      }
    });
    return std::vector<Tensor>{need_x ? dx.reshape(gc.shape()) : Tensor(), w.defined() ? dw : Tensor(),
                               b.defined() ? db : Tensor()};
  }, where);
}

}  // namespace cppgrad
