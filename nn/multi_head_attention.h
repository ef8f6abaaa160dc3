#pragma once
#include <memory>

#include "nn/attention_module.h"

#include "nn/linear.h"

namespace cppgrad::nn {

struct MultiHeadAttentionOptions {
  std::int64_t d_model = 0;
  std::int64_t n_heads = 1;
};

// H heads of scaled dot-product attention, each on its own d_model/H slice of bias-free projections W_q, W_k,
// W_v, concatenated and mixed by W_o. Self-attention: attend(x, x, x, mask); cross-attention: attend(x, memory,
// memory, mask) with Lq != Lk.
class MultiHeadAttention : public AttentionModule {
 public:
  MultiHeadAttention(const MultiHeadAttentionOptions& options, Generator& gen);
  std::string type_name() const override { return "MultiHeadAttention"; }
  std::string extra_repr() const override;

  // query: [B, Lq, D]  key, value: [B, Lk, D]  mask: broadcastable to [B, H, Lq, Lk] (a 3-D [B, Lq, Lk] or
  // [B, 1, Lk] mask gets a head dim) -> output [B, Lq, D], weights [B, H, Lq, Lk]
  AttentionResult attend(const Tensor& query, const Tensor& key, const Tensor& value,
                         const Tensor& mask = Tensor()) const override;
  AttentionResult forward(const Tensor& query, const Tensor& key, const Tensor& value,
                          const Tensor& mask = Tensor()) const {
    return attend(query, key, value, mask);
  }

  // Keys and values projected and split into heads once, so a decoder generating one position at a time can
  // reuse them: the encoder's memory, for cross-attention (a self-attention's own past positions go in a KVCache).
  struct KeyValues {
    Tensor k, v;  // [B, H, Lk, dh]
  };
  KeyValues project_key_values(const Tensor& key, const Tensor& value) const;  // key, value: [B, Lk, D]
  // attend() with projected keys and values: query [B, Lq, D] -> output [B, Lq, D], weights [B, H, Lq, Lk]
  AttentionResult attend_projected(const Tensor& query, const KeyValues& kv, const Tensor& mask = Tensor()) const;

  // Causal self-attention, incrementally (nn/kv_cache.h), as CausalSelfAttention::forward_cached with W_o after it.
  // x: [B, t, D], the t positions after the `length` already cached; k_cache, v_cache: [B, H, capacity, dh] with
  // positions 0..length-1 filled, length + t <= capacity. Writes the new positions' keys and values at
  // length..length+t-1, then position length+i attends to positions 0..length+i -> [B, t, D], equal to the last t
  // rows of attend(x, x, x, causal_mask) on all length+t positions. Inference only: runs under its own NoGradGuard
  // (the caches are overwritten in place, which a recorded graph could not survive).
  Tensor forward_cached(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache, std::int64_t length) const;

 private:
  MultiHeadAttentionOptions options_;
  std::shared_ptr<Linear> W_q_, W_k_, W_v_, W_o_;
};

}  // namespace cppgrad::nn
