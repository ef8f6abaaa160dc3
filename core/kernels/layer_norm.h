#pragma once
// Layer normalisation's fast float32 kernel (the definition is core/ops/layer_norm.cpp): forward keeps exactly what
// backward needs (per-row 1/std and the normalised rows, as llm.c's layernorm_forward), and backward is the closed
// form below rather than a chain of ops.
//   per row: mu = mean(x), rstd = 1/sqrt(var(x) + eps), xhat = (x - mu) * rstd, y = xhat * w + b
//   backward, with dh = g * w:  dx = rstd * (dh - mean(dh) - xhat * mean(dh * xhat))
//                               dw = sum over rows of g * xhat,  db = sum over rows of g
#include <array>

#include "core/tensor.h"

namespace cppgrad::kernels {

// What backward reads. xhat: [N, D]  rstd: [N]
struct LayerNormSaved {
  Tensor xhat, rstd;
};

// x: float32 [.., D]  w, b: [D] or undefined -> y: [.., D]; fills *saved when it is not null.
Tensor layer_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, double eps, LayerNormSaved* saved);

// g: [.., D] -> {dx [.., D], dw [D], db [D]}; each only when its need_* is set (undefined otherwise).
std::array<Tensor, 3> layer_norm_backward(const Tensor& g, const LayerNormSaved& saved, const Tensor& w, bool need_x,
                                          bool need_w, bool need_b);

}  // namespace cppgrad::kernels
