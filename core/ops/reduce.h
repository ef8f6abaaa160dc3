#pragma once
// Reductions (core/ops/reduce.cpp). Part of core/ops.h.
#include <cstdint>
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

// x: (..) -> (..) with `dims` removed (or kept as size 1 with keepdim). Empty dims = all dims.
Tensor sum(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::source_location where = std::source_location::current());
Tensor mean(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::source_location where = std::source_location::current());
// Maximum over one dim; the gradient goes to the first maximal element, as PyTorch's max(dim).
Tensor max(const Tensor& x, std::int64_t dim, bool keepdim = false, std::source_location where = std::source_location::current());
// The sum of the squares of all elements, in double, any layout and dtype; a value for norms and logs, not an op
// (nothing is recorded). 2-norm: std::sqrt(squared_norm(x)).
double squared_norm(const Tensor& x);
// Index of the first maximum along dim, int64, not differentiable.
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim = false, std::source_location where = std::source_location::current());

}  // namespace cppgrad
