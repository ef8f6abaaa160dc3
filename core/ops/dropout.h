#pragma once
// Dropout (core/ops/dropout.cpp). Part of core/ops.h.
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

class Generator;

// Zeroes each element with probability p and scales the rest by 1/(1-p). Identity when !training or p == 0.
// x: (..) -> (..)
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen, std::source_location where = std::source_location::current());

}  // namespace cppgrad
