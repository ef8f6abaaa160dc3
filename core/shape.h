#pragma once
// Shapes and strides: vectors of int64 kept inline up to rank 6 (core/small_vector.h), with the helpers every op
// needs to check and broadcast them.
#include <cstdint>
#include <string>
#include <vector>

#include "core/small_vector.h"

namespace cppgrad {

inline constexpr std::size_t kInlineRank = 6;
using Shape = SmallVector<std::int64_t, kInlineRank>;
using Strides = SmallVector<std::int64_t, kInlineRank>;
// A list of dim indices (permute's order, the dims a sum reduces): as small, and as allocation-free, as a shape.
using Dims = SmallVector<std::int64_t, kInlineRank>;

// "[2, 3]" — the form every error message uses.
std::string shape_str(const Shape& shape);

// Product of the sizes; 1 for a scalar (rank 0).
std::int64_t numel_of(const Shape& shape);

// Row-major strides of a contiguous tensor of this shape.
Strides contiguous_strides(const Shape& shape);

// Maps a possibly negative dim into [0, rank); throws "<op>: dim d out of range for rank r".
std::int64_t normalize_dim(std::int64_t dim, std::int64_t rank, const char* op);

// NumPy/PyTorch broadcasting: align trailing dims; sizes must match or be 1.
// Throws "<op>: shapes cannot be broadcast: a [..] vs b [..]".
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Strides that read a tensor of (shape, strides) as if it had been expanded to `target`
// (stride 0 on broadcast dims). `shape` must be broadcastable to `target`.
Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& target);

}  // namespace cppgrad
