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

 private:
  MultiHeadAttentionOptions options_;
  std::shared_ptr<Linear> W_q_, W_k_, W_v_, W_o_;
};

// [B, L, H * dh] -> [B, H, L, dh]: each head's slice becomes its own batch entry (a view, no copy).
Tensor split_heads(const Tensor& x, std::int64_t n_heads);
// [B, H, L, dh] -> [B, L, H * dh]: the inverse (copies, since the heads interleave in memory).
Tensor merge_heads(const Tensor& x);

}  // namespace cppgrad::nn
