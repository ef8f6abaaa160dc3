#pragma once
// The fused float32 attention op over a whole batch of heads (the definition is core/ops/attention.cpp): the batch
// driver around the per-head kernels of core/kernels/attention.h. It walks the leading (batch, head) dims once,
// splits runs of heads across threads when there is enough work, and groups the one-query heads of a decoding step
// eight at a time.
#include <array>

#include "core/tensor.h"

namespace cppgrad::kernels {

inline constexpr std::size_t kMaxAttentionLeadingDims = 8;

// q: float32 [.., Lq, dk]  k: [.., Lk, dk]  v: [.., Lk, dv]  mask: bool broadcastable to [.., Lq, Lk] or undefined
// (all checked by the op) -> {output [.., Lq, dv] (in v's memory order), weights [.., Lq, Lk]}
std::array<Tensor, 2> attention_forward_batch(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask);

// g: [.., Lq, dv], weights: the forward's, or undefined (each head's recomputed, the same bits, just before its
// backward: an op that keeps only q, k and v holds no [.., Lq, Lk] between forward and backward) -> {dq, dk, dv},
// shaped like q, k and v
std::array<Tensor, 3> attention_backward_batch(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                                               const Tensor& mask, const Tensor& weights);

// The same into given tensors dq, dk, dv (shaped like q, k and v, rows of unit stride; views of one tensor, say),
// every element overwritten.
void attention_backward_batch_into(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                   const Tensor& weights, const Tensor& dq, const Tensor& dk, const Tensor& dv);

}  // namespace cppgrad::kernels
