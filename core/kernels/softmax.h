#pragma once
// The fast float32 kernels of the softmax family (the definitions are core/ops/softmax.cpp): one softmax row on
// 8-lane vectors, and cross-entropy fused with it (loss forward keeps the probabilities; backward is their closed
// form, p - onehot(t), scaled).
#include <cstdint>

#include "core/tensor.h"

namespace cppgrad::kernels {

// y = softmax(x) over one row of n floats; a row with every entry -inf gives zeros.
void softmax_row_f32x8(const float* x, float* y, std::int64_t n);

// logits: float32 [N, C] contiguous  target: int64 [N] (checked: in [0, C) or ignore_index)
// -> the mean loss over the `valid` targets (NaN when there are none); probs: [N, C], the rows' softmax.
Tensor cross_entropy_forward(const Tensor& logits, const Tensor& target, std::int64_t ignore_index, std::int64_t valid,
                             Tensor& probs);
// The same loss with the softmax written over logits itself, which then holds probs: for an op whose logits are its
// own buffer (linear_cross_entropy).
Tensor cross_entropy_forward_in_place(const Tensor& logits, const Tensor& target, std::int64_t ignore_index,
                                      std::int64_t valid);
// g: the loss's gradient (one element) -> dlogits [N, C] = g / valid * (probs - onehot(target)), 0 on ignored rows
Tensor cross_entropy_backward(const Tensor& g, const Tensor& probs, const Tensor& target, std::int64_t ignore_index,
                              std::int64_t valid);
// The same values written over probs, which is returned: for a rule that runs once (autograd::rule_runs_once), whose
// probs nobody reads after it.
Tensor cross_entropy_backward_over_probs(const Tensor& g, const Tensor& probs, const Tensor& target,
                                         std::int64_t ignore_index, std::int64_t valid);

}  // namespace cppgrad::kernels
