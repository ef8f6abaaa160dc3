#pragma once
// Layout helpers shared by the ops that choose how their results are stored (matmul, attention).
#include "core/tensor.h"

namespace cppgrad {

// An uninitialised tensor of `shape` (b's rank and batch shape) stored in the memory order of b's dims when b is a
// dense permutation of its dims with contiguous rows, and contiguous otherwise. Attention's heads are views
// x.view([B, L, H, dh]).transpose(1, 2) stored as [B, L, H, dh]; a result laid out like them makes merging the
// heads afterwards (transpose(1, 2).reshape) a view instead of a copy.
Tensor empty_like_layout_of(const Shape& shape, const Tensor& b);

}  // namespace cppgrad
