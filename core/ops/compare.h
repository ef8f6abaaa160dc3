#pragma once
// Comparisons with a number (core/ops/compare.cpp), x: (..) -> bool (..). Not differentiable: a mask is a
// constant. Part of core/ops.h.
#include "core/tensor.h"

namespace cppgrad {

Tensor eq(const Tensor& x, double s);
Tensor ne(const Tensor& x, double s);
Tensor lt(const Tensor& x, double s);
Tensor le(const Tensor& x, double s);
Tensor gt(const Tensor& x, double s);
Tensor ge(const Tensor& x, double s);

}  // namespace cppgrad
