#pragma once
// index_select's gradient (core/ops/select.cpp) in one buffer; defined with index_add in core/ops/scatter.cpp. Not
// part of core/ops.h: a backward rule's helper.
#include <cstdint>

#include "core/source_location.h"
#include "core/tensor.h"

namespace cppgrad {

// index_add(zeros(shape), dim, index, source), written into the zeros when no graph is recorded (a backward without
// create_graph) instead of into their copy: at GPT-2's token embedding ([50257, 768], 154 MB) the copy doubled the
// rule's peak. The same values either way.
Tensor index_add_to_zeros(const Shape& shape, std::int64_t dim, const Tensor& index, const Tensor& source,
                          std::source_location where = std::source_location::current());

}  // namespace cppgrad
