#include "core/kernels/gelu.h"

#include "core/kernels/elementwise_loops.h"
#include "core/kernels/gelu_loops.h"
#include "core/kernels/simd.h"
#include "core/kernels/tensor_values.h"

namespace cppgrad::kernels {

void gelu_tanh_forward_at(SimdLevel level, const float* x, float* y, std::int64_t n) {
  if (level == SimdLevel::Avx512 && cpu_has_avx512()) return gelu_tanh_forward_avx512(x, y, n);
  gelu_forward_loop<f32x8>(x, y, n);
}

void gelu_tanh_backward_at(SimdLevel level, const float* g, const float* x, float* dx, std::int64_t n) {
  if (level == SimdLevel::Avx512 && cpu_has_avx512()) return gelu_tanh_backward_avx512(g, x, dx, n);
  gelu_backward_loop<f32x8>(g, x, dx, n);
}

namespace {

// body(begin, end) over [0, n) in chunks of whole 16-lane vectors, split across threads when the tensor is large.
template <typename Body>
void for_each_chunk(std::int64_t n, Body body) {
  constexpr std::int64_t kChunk = 4096;
  parallel_for((n + kChunk - 1) / kChunk, n > kParallelGrain,
               [&](std::int64_t c) { body(c * kChunk, std::min(n, (c + 1) * kChunk)); });
}

}  // namespace

Tensor gelu_tanh_forward(const Tensor& x) {
  const Tensor xs = contiguous_values(x);
  Tensor y = Tensor::empty(x.shape(), DType::Float32);
  const float* px = xs.data<float>();
  float* py = y.mutable_data<float>();
  const SimdLevel level = simd_level();
  for_each_chunk(y.numel(), [&](std::int64_t b, std::int64_t e) { gelu_tanh_forward_at(level, px + b, py + b, e - b); });
  return y;
}

Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x) {
  const Tensor gs = contiguous_values(g), xs = contiguous_values(x);
  Tensor dx = Tensor::empty(x.shape(), DType::Float32);
  const float *pg = gs.data<float>(), *px = xs.data<float>();
  float* pd = dx.mutable_data<float>();
  const SimdLevel level = simd_level();
  for_each_chunk(dx.numel(), [&](std::int64_t b, std::int64_t e) {
    gelu_tanh_backward_at(level, pg + b, px + b, pd + b, e - b);
  });
  return dx;
}

}  // namespace cppgrad::kernels
