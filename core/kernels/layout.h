#pragma once
// Layout helpers shared by the ops that choose how their results are stored (matmul, attention) or read elements
// by index (gather, scatter_add).
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace cppgrad {

// An uninitialised tensor of `shape` (b's rank and batch shape) stored in the memory order of b's dims when b is a
// dense permutation of its dims with contiguous rows, and contiguous otherwise. Attention's heads are views
// x.view([B, L, H, dh]).transpose(1, 2) stored as [B, L, H, dh]; a result laid out like them makes merging the
// heads afterwards (transpose(1, 2).reshape) a view instead of a copy.
Tensor empty_like_layout_of(const Shape& shape, const Tensor& b);

// For gather and scatter_add along dim d: the element offset, in a contiguous tensor of x_shape, of every element
// of `index` (in its row-major order), i.e. index[..., j, ...] read along d. Every index is checked to lie in
// [0, x_shape[d]); `op` names the op in the message.
std::vector<std::int64_t> gather_offsets(const Shape& x_shape, std::int64_t d, const Tensor& index, const char* op);

}  // namespace cppgrad
