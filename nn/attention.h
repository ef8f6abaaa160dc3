#pragma once
// Scaled dot-product attention and the masks that steer it.
//
//   scores  = q k^T / sqrt(d_k)                       [.., Lq, Lk]   how well each query matches each key
//   scores  = where(mask, scores, -inf)                              blocked keys can never be chosen
//   weights = softmax(scores, over Lk)                [.., Lq, Lk]   each row sums to 1 (or is all 0 if fully blocked)
//   output  = weights v                               [.., Lq, dv]   a weighted average of the values
//
// The first three lines are core's attention_weights (core/ops/attention.h), written once in ops (six graph nodes
// with the last), so every step can be read and differentiated, the weights included; the masking is core's
// apply_attention_mask, which every attention variant calls. scaled_dot_product_attention below is that composition
// with nn's argument checks. The attention modules run the same computation as one op, core's fused_attention, whose
// definition is this composition: faster, and equal to it within rounding (tests hold them equal), but its weights
// are for reading (attention maps) and pass no gradient back.
//
// Masks are bool with true = "may attend" (the golden cases' and PyTorch's boolean attn_mask convention),
// broadcast against the scores [.., Lq, Lk]: causal [L, L], key padding [B, 1, Lk] or [B, 1, 1, Lk].
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace cppgrad::nn {

struct AttentionResult {
  Tensor output;   // [.., Lq, dv]
  Tensor weights;  // [.., Lq, Lk]; from the attention modules (fused_attention) for reading only: not differentiated
};

// q: [.., Lq, dk]  k: [.., Lk, dk]  v: [.., Lk, dv]  mask: bool broadcastable to [.., Lq, Lk], or undefined.
AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& mask = Tensor());

// A multi-head key-padding mask [B, 1, 1, Lk] without its head dim, [B, 1, Lk], for the single-head variants
// (additive, multiplicative) whose scores are [B, Lq, Lk]; any other mask is returned as it is.
Tensor without_head_dim(const Tensor& mask);

// [L, L] bool, true on and below the diagonal: position i may attend to positions <= i.
Tensor causal_mask(std::int64_t L);
// [B, 1, 1, Lk] bool, true where position < length[b] (lengths: [B] int64).
Tensor key_padding_mask_from_lengths(const Tensor& lengths, std::int64_t Lk);
// [B, 1, 1, Lk] bool, true where ids[b, j] != pad_id (ids: [B, Lk] int64).
Tensor key_padding_mask_from_ids(const Tensor& ids, std::int64_t pad_id);

// Multi-head attention splits a width into `heads` heads of width / heads dims: std::invalid_argument unless heads
// divides width, naming both as the config calls them ("--heads 3 does not divide --d-model 16: ..."). The one check
// of it every config makes (the GPT's and the reversal model's, from flags or a checkpoint).
void check_heads_divide(std::int64_t heads, std::int64_t width, const std::string& heads_name,
                        const std::string& width_name);

}  // namespace cppgrad::nn
