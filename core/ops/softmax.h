#pragma once
// The softmax family (core/ops/softmax.cpp). Part of core/ops.h.
#include <cstdint>
#include "core/source_location.h"

#include "core/tensor.h"

namespace cppgrad {

// x: (..) -> (..), normalised along dim. A slice whose entries are all -inf (every key masked) has no
// distribution: softmax returns zeros there, log_softmax returns -inf, and both pass back a zero gradient.
Tensor softmax(const Tensor& x, std::int64_t dim = -1, std::source_location where = std::source_location::current());
Tensor log_softmax(const Tensor& x, std::int64_t dim = -1, std::source_location where = std::source_location::current());
// Mean negative log-likelihood of class indices. logits: (.., C) float; target: (..) int64 in [0, C) or
// ignore_index. Returns a scalar; the mean is over non-ignored targets (NaN when every target is ignored, as
// PyTorch's: 0 / 0).
// Note: the class dim is LAST (PyTorch puts it at dim 1 for inputs of rank > 2).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, std::int64_t ignore_index = -100, std::source_location where = std::source_location::current());
// cross_entropy(linear(x, weight), target, ignore_index), the same values and gradients, as one op that never keeps
// the logits (a language model's head and loss: GPT::loss). x: [.., in]  weight: [classes, in]  target: [..]
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& target,
                            std::int64_t ignore_index = -100,
                            std::source_location where = std::source_location::current());

}  // namespace cppgrad
