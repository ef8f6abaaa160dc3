#pragma once
// GPT-2's GELU (the tanh form) in float32, forward and backward each one pass over memory (the definition is
// core/ops/unary.cpp's gelu_tanh: a loop of std::tanh forward, nine ops backward).
//
//   y = x/2 (1 + tanh u),  u = c (x + a x^3),  c = sqrt(2/pi),  a = 0.044715
//
// Written with e = e^(-2u) and s = (1 + tanh u)/2 = 1 / (1 + e), the logistic sigmoid of 2u, which takes one exp
// (the vectorised one of core/kernels/exp.h) and no tanh, and never subtracts nearly equal numbers (1 + tanh u near
// x = -4 does, and 1 - s near x = 4: it is e s):
//   y  = x s
//   dx = g (s + 2 x s (1 - s) c (1 + 3 a x^2))      since 1 - tanh^2 u = 4 s (1 - s)
//
// The loops (core/kernels/gelu_loops.h) are compiled twice, on 8 lanes (the build's AVX2) and on 16 (AVX-512,
// core/kernels/gelu_avx512.cpp: 1.8x the 8-lane loop's speed on the Zen 5), and run at simd_level()
// (core/kernels/gemm.h).
#include "core/kernels/gemm.h"
#include "core/tensor.h"

namespace cppgrad::kernels {

// x: float32, any shape and layout -> y, contiguous, x's shape
Tensor gelu_tanh_forward(const Tensor& x);

// g, x: float32, x's shape -> dx, contiguous
Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x);

// The loops on raw memory at a chosen level (the tests hold the two equal): y[i] = gelu(x[i]) and
// dx[i] = g[i] gelu'(x[i]) for i in [0, n).
void gelu_tanh_forward_at(SimdLevel level, const float* x, float* y, std::int64_t n);
void gelu_tanh_backward_at(SimdLevel level, const float* g, const float* x, float* dx, std::int64_t n);

// The 16-lane loops (core/kernels/gelu_avx512.cpp): call only when cpu_has_avx512().
void gelu_tanh_forward_avx512(const float* x, float* y, std::int64_t n);
void gelu_tanh_backward_avx512(const float* g, const float* x, float* dx, std::int64_t n);

}  // namespace cppgrad::kernels
