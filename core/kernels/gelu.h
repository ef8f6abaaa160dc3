#pragma once
// GPT-2's GELU (the tanh form) in float32, forward and backward each one pass over memory (the definition is
// core/ops/unary.cpp's gelu_tanh: a loop of std::tanh forward, nine ops backward).
//
//   y = x/2 (1 + tanh u),  u = c (x + a x^3),  c = sqrt(2/pi),  a = 0.044715
//
// Written with s = (1 + tanh u)/2 = 1 / (1 + e^(-2u)), the logistic sigmoid of 2u, which takes one exp (the
// vectorised one of core/kernels/exp.h) and no tanh, and never subtracts nearly equal numbers (1 + tanh u near
// x = -4 does):
//   y  = x s
//   dx = g (s + 2 x s (1 - s) c (1 + 3 a x^2))      since 1 - tanh^2 u = 4 s (1 - s)
#include "core/tensor.h"

namespace cppgrad::kernels {

// x: float32, any shape and layout -> y, contiguous, x's shape
Tensor gelu_tanh_forward(const Tensor& x);

// g, x: float32, x's shape -> dx, contiguous
Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x);

}  // namespace cppgrad::kernels
