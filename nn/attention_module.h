#pragma once
#include "nn/attention.h"
#include "nn/module.h"

namespace cppgrad::nn {

// Anything that attends from queries to keys and values. The decoder's cross-attention holds one of these,
// so scaled dot-product (multi-head), additive (Bahdanau) and multiplicative (Luong) attention are interchangeable.
class AttentionModule : public Module {
 public:
  // query: [B, Lq, dq]  key: [B, Lk, dk]  value: [B, Lk, dv]  mask: bool "may attend", broadcastable to
  // [B, Lq, Lk] (a [B, 1, 1, Lk] key-padding mask is accepted too) -> output [B, Lq, d_out] and weights
  // ([B, H, Lq, Lk] for multi-head, [B, Lq, Lk] otherwise).
  virtual AttentionResult attend(const Tensor& query, const Tensor& key, const Tensor& value,
                                 const Tensor& mask = Tensor()) const = 0;
};

}  // namespace cppgrad::nn
