#include "core/kernels/gelu.h"

#include <numbers>

#include "core/kernels/elementwise_loops.h"
#include "core/kernels/exp.h"
#include "core/kernels/simd.h"

namespace cppgrad::kernels {

namespace {

constexpr float kC = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi), kA = 0.044715f;

// s = sigmoid(2u) for x (F is float or f32x8: every step is lane-wise)
template <typename F>
[[gnu::always_inline]] inline F half_one_plus_tanh(F x) {
  const F u = kC * (x + kA * x * x * x);
  return 1.0f / (1.0f + detail::exp_cephes(-2.0f * u));
}

template <typename F>
[[gnu::always_inline]] inline F gelu_value(F x) {
  return x * half_one_plus_tanh(x);
}

template <typename F>
[[gnu::always_inline]] inline F gelu_grad(F g, F x) {
  const F s = half_one_plus_tanh(x);
  return g * (s + 2.0f * x * s * (1.0f - s) * kC * (1.0f + 3.0f * kA * x * x));
}

// out[i] = f(ins[i]...) over n floats, 8 at a time with a scalar tail; threads split whole blocks of 8 when the
// tensor is large.
template <typename F>
void map_f32(std::int64_t n, F f) {
  const std::int64_t blocks = (n + 7) / 8;
  parallel_for(blocks, n > kParallelGrain, [&](std::int64_t b) {
    const std::int64_t i = b * 8;
    if (i + 8 <= n) f.vector(i);
    else
      for (std::int64_t j = i; j < n; ++j) f.scalar(j);
  });
}

}  // namespace

Tensor gelu_tanh_forward(const Tensor& x) {
  const Tensor xs = x.detach().contiguous();
  Tensor y = Tensor::empty(x.shape(), DType::Float32);
  const float* px = xs.data<float>();
  float* py = y.data<float>();
  struct {
    const float* px;
    float* py;
    void vector(std::int64_t i) const { store8(py + i, gelu_value(load8(px + i))); }
    void scalar(std::int64_t i) const { py[i] = gelu_value(px[i]); }
  } f{px, py};
  map_f32(y.numel(), f);
  return y;
}

Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x) {
  const Tensor gs = g.detach().contiguous(), xs = x.detach().contiguous();
  Tensor dx = Tensor::empty(x.shape(), DType::Float32);
  struct {
    const float* pg;
    const float* px;
    float* pd;
    void vector(std::int64_t i) const { store8(pd + i, gelu_grad(load8(pg + i), load8(px + i))); }
    void scalar(std::int64_t i) const { pd[i] = gelu_grad(pg[i], px[i]); }
  } f{gs.data<float>(), xs.data<float>(), dx.data<float>()};
  map_f32(dx.numel(), f);
  return dx;
}

}  // namespace cppgrad::kernels
