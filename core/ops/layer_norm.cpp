// Layer normalisation over the last dim, fused: forward keeps exactly what backward needs (per-row mean and
// 1/std, as llm.c's layernorm_forward), and backward is the closed form below rather than a chain of ops.
#include <cmath>
#include <stdexcept>

#include "core/kernels/parallel_for.h"
#include "core/ops.h"

namespace cppgrad {

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
  Tensor xhat = Tensor::empty({N, D}, x.dtype());
  Tensor rstd = Tensor::empty({N}, x.dtype());
  Tensor w = weight.defined() ? weight.detach().contiguous() : Tensor();
  Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  dispatch_floating(x.dtype(), "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* px = xc.data<T>();
    const T* pw = w.defined() ? w.data<T>() : nullptr;
    const T* pb = b.defined() ? b.data<T>() : nullptr;
    T *py = y.data<T>(), *ph = xhat.data<T>(), *pr = rstd.data<T>();
    // Row sums use omp simd reductions: vectorised, with a lane order fixed at compile time (reproducible).
    kernels::parallel_for(N, N * D > (1 << 15), [&](std::int64_t i) {
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
      pr[i] = r;
      T* hi = ph + i * D;
      T* yi = py + i * D;
#pragma omp simd
      for (std::int64_t j = 0; j < D; ++j) hi[j] = (xi[j] - mu) * r;
      if (pw && pb) {
#pragma omp simd
        for (std::int64_t j = 0; j < D; ++j) yi[j] = hi[j] * pw[j] + pb[j];
      } else {
        for (std::int64_t j = 0; j < D; ++j) yi[j] = hi[j] * (pw ? pw[j] : T(1)) + (pb ? pb[j] : T(0));
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
