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

// Self-attention where position i sees only positions <= i (a language model's, or a decoder's, view of its
// own input). Bias-free W_q, W_k, W_v of size d_model; the heads' outputs are concatenated (no output
// projection, as seed 003's; wrap it with a Linear if you want one).
class CausalSelfAttention : public Module {
 public:
  CausalSelfAttention(const CausalSelfAttentionOptions& options, Generator& gen);
  std::string type_name() const override { return "CausalSelfAttention"; }
  std::string extra_repr() const override;

  // x: [B, L, d_model] -> output [B, L, d_model], weights [B, H, L, L] (zero above the diagonal)
  AttentionResult forward(const Tensor& x) const;

 private:
  CausalSelfAttentionOptions options_;
  std::shared_ptr<Linear> W_q_, W_k_, W_v_;
};

}  // namespace cppgrad::nn
