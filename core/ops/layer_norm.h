#pragma once
// Layer normalisation (core/ops/layer_norm.cpp). Part of core/ops.h.
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

// Normalises over the last dim. x: (.., D)  weight, bias: (D) or undefined -> (.., D)
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5, std::source_location where = std::source_location::current());

}  // namespace cppgrad
