#pragma once
// The adjoints of index_select, gather and slice (core/ops/scatter.cpp), each the other's backward. Part of
// core/ops.h.
#include <cstdint>
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

// index_add: x: (A.., S, B..)  index: (I)  source: (A.., I, B..) -> x + source's rows added at index along dim
Tensor index_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& source, std::source_location where = std::source_location::current());
// scatter_add: x + src's elements added where gather would read them: out[.., index[.., j, ..], ..] += src[.., j, ..]
Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, std::source_location where = std::source_location::current());
// slice_scatter: x with x.slice(dim, start, end, step) replaced by src (shaped like that slice)
Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim, std::int64_t start, std::int64_t end,
                     std::int64_t step = 1, std::source_location where = std::source_location::current());

}  // namespace cppgrad
