#pragma once
// The fused float32 linear layer behind cppgrad::linear and linear_relu (the definition, matmul + add (+ relu), is
// in core/ops/matmul.cpp): one GEMM over all rows with the bias (and the relu) applied in the same pass over y.
//   y [rows, out] = x [rows, in] @ W^T [in, out] + b
//   dx = g W;  dW = g^T x;  db = g summed over the rows      (g: [rows, out], relu's mask already applied)
#include <array>

#include "core/precision.h"
#include "core/tensor.h"

namespace cppgrad::kernels {

// x: float32 [.., in]  w: [out, in]  b: [out] or undefined -> [.., out]; relu(y) when relu_after. `precision`: the
// products' (core/precision.h).
Tensor linear_forward(const Tensor& x, const Tensor& w, const Tensor& b, bool relu_after, LinearPrecision precision);

// g: [.., out] -> {dx [.., in], dW [out, in], db [out]}, each only when asked for (undefined otherwise).
std::array<Tensor, 3> linear_backward(const Tensor& g, const Tensor& x, const Tensor& w, bool need_x, bool need_w,
                                      bool need_b, LinearPrecision precision);

}  // namespace cppgrad::kernels
