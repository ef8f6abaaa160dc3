#pragma once
// Differentiable views (core/ops/views.cpp); the Tensor methods of the same names call these. Part of core/ops.h.
#include <cstdint>
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

Tensor view(const Tensor& x, const Shape& shape, std::source_location where = std::source_location::current());
Tensor reshape(const Tensor& x, const Shape& shape, std::source_location where = std::source_location::current());
Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1, std::source_location where = std::source_location::current());
Tensor permute(const Tensor& x, const Dims& dims, std::source_location where = std::source_location::current());
Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1, std::source_location where = std::source_location::current());
Tensor unsqueeze(const Tensor& x, std::int64_t dim, std::source_location where = std::source_location::current());
Tensor squeeze(const Tensor& x, std::int64_t dim, std::source_location where = std::source_location::current());
// x.select(dim, index): the slice at index with dim dropped (one view, as slice + squeeze would be two)
Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index, std::source_location where = std::source_location::current());
Tensor expand(const Tensor& x, const Shape& shape, std::source_location where = std::source_location::current());
Tensor contiguous(const Tensor& x, std::source_location where = std::source_location::current());
// Attention heads: [B, L, H * dh] -> [B, H, L, dh], each head's slice its own batch entry (a view, no copy); and the
// inverse, [B, H, L, dh] -> [B, L, H * dh] (a view when x is stored as [B, L, H, dh], else a copy).
Tensor split_heads(const Tensor& x, std::int64_t n_heads, std::source_location where = std::source_location::current());
Tensor merge_heads(const Tensor& x, std::source_location where = std::source_location::current());

}  // namespace cppgrad
