#pragma once
// Selection: masks, joins and indexing (core/ops/select.cpp). Part of core/ops.h.
#include <cstdint>
#include "core/source_location.h"
#include <vector>

#include "core/tensor.h"

namespace cppgrad {

// mask: bool, broadcastable to x's shape; true entries of x are replaced by value. x: (..) -> (..)
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, std::source_location where = std::source_location::current());
// cond ? a : b, all three broadcast together. cond: bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, std::source_location where = std::source_location::current());
// Joins along an existing dim (cat) or a new one (stack); all other sizes must agree.
Tensor cat(const std::vector<Tensor>& xs, std::int64_t dim, std::source_location where = std::source_location::current());
Tensor stack(const std::vector<Tensor>& xs, std::int64_t dim, std::source_location where = std::source_location::current());
// x: (.., S, ..) with S at dim; index: (I) int64 -> (.., I, ..). Backward adds rows back (index_add).
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index, std::source_location where = std::source_location::current());
// out[i][j][k] = x[i][index[i][j][k]][k] for dim = 1 (PyTorch's gather): index has x's rank and its sizes
// are <= x's in every dim but `dim`. Backward scatters (adds) the gradient back.
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index, std::source_location where = std::source_location::current());
// Embedding lookup. weight: (V, D)  ids: (..) int64 in [0, V) -> (.., D)
Tensor embedding(const Tensor& weight, const Tensor& ids, std::source_location where = std::source_location::current());

}  // namespace cppgrad
