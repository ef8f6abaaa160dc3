#pragma once
#include <memory>

#include "nn/attention.h"
#include "nn/linear.h"

namespace cppgrad::nn {

struct SelfAttentionOptions {
  std::int64_t d_model = 0;
  std::int64_t d_k = 0;
  std::int64_t d_v = 0;
};

// Single-head self-attention (seed 003): every position of x looks at every position of x.
// Q = x W_q^T [B, L, d_k], K = x W_k^T [B, L, d_k], V = x W_v^T [B, L, d_v], all bias-free.
class SelfAttention : public Module {
 public:
  SelfAttention(const SelfAttentionOptions& options, Generator& gen);
  std::string type_name() const override { return "SelfAttention"; }
  std::string extra_repr() const override;

  // x: [B, L, d_model]  mask: broadcastable to [B, L, L] -> output [B, L, d_v], weights [B, L, L]
  AttentionResult forward(const Tensor& x, const Tensor& mask = Tensor()) const;

 private:
  SelfAttentionOptions options_;
  std::shared_ptr<Linear> W_q_, W_k_, W_v_;
};

struct CausalSelfAttentionOptions {
  std::int64_t d_model = 0;
  std::int64_t n_heads = 1;
};

// Self-attention where position i sees only positions <= i (a language model's, or a decoder's, view of its own
// input), in seed 003's layout: bias-free W_q, W_k, W_v of size d_model, the heads' outputs concatenated (no output
// projection; wrap it with a Linear if you want one). GPT-2's layout, one fused c_attn and a c_proj with bias, is
// GPTAttention (nn/gpt.h).
class CausalSelfAttention : public Module {
 public:
  CausalSelfAttention(const CausalSelfAttentionOptions& options, Generator& gen);
  std::string type_name() const override { return "CausalSelfAttention"; }
  std::string extra_repr() const override;

  // x: [B, L, d_model] -> output [B, L, d_model], weights [B, H, L, L] (zero above the diagonal)
  AttentionResult forward(const Tensor& x) const;

  // Incremental decoding (nn/kv_cache.h). x: [B, t, d_model], the t positions after the `length` already cached;
  // k_cache, v_cache: [B, H, capacity, dh] with positions 0..length-1 filled, length + t <= capacity.
  // Writes the new positions' keys and values at length..length+t-1, then position length+i attends to positions
  // 0..length+i (causal within the new ones too, so a whole prompt can be fed at once) -> [B, t, d_model], equal
  // to the last t rows of forward() on all length+t positions. Inference only: runs under its own NoGradGuard
  // (the caches are overwritten in place, which a recorded graph could not survive).
  Tensor forward_cached(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache, std::int64_t length) const;

 private:
  CausalSelfAttentionOptions options_;
  std::shared_ptr<Linear> W_q_, W_k_, W_v_;
};

}  // namespace cppgrad::nn
