#include "nn/self_attention.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/views.h"
#include "nn/kv_cache.h"
#include "nn/multi_head_attention.h"

namespace cppgrad::nn {

SelfAttention::SelfAttention(const SelfAttentionOptions& options, Generator& gen) : options_(options) {
  W_q_ = register_module("W_q", std::make_shared<Linear>(LinearOptions{options.d_model, options.d_k, false}, gen));
  W_k_ = register_module("W_k", std::make_shared<Linear>(LinearOptions{options.d_model, options.d_k, false}, gen));
  W_v_ = register_module("W_v", std::make_shared<Linear>(LinearOptions{options.d_model, options.d_v, false}, gen));
}

std::string SelfAttention::extra_repr() const {
  return fmt::format("d_model={}, d_k={}, d_v={}", options_.d_model, options_.d_k, options_.d_v);
}

AttentionResult SelfAttention::forward(const Tensor& x, const Tensor& mask) const {
  const FusedAttention r = fused_attention(W_q_->forward(x), W_k_->forward(x), W_v_->forward(x), mask);
  return {r.output, r.weights};
}

CausalSelfAttention::CausalSelfAttention(const CausalSelfAttentionOptions& options, Generator& gen)
    : options_(options) {
  if (options.n_heads <= 0 || options.d_model % options.n_heads != 0)
    throw std::invalid_argument(fmt::format("CausalSelfAttention: d_model ({}) must be divisible by n_heads ({})",
                                            options.d_model, options.n_heads));
  const LinearOptions square{.in = options.d_model, .out = options.d_model, .bias = false};
  W_q_ = register_module("W_q", std::make_shared<Linear>(square, gen));
  W_k_ = register_module("W_k", std::make_shared<Linear>(square, gen));
  W_v_ = register_module("W_v", std::make_shared<Linear>(square, gen));
}

std::string CausalSelfAttention::extra_repr() const {
  return fmt::format("d_model={}, heads={}", options_.d_model, options_.n_heads);
}

AttentionResult CausalSelfAttention::forward(const Tensor& x) const {
  if (x.dim() != 3 || x.shape()[2] != options_.d_model)
    throw std::invalid_argument("CausalSelfAttention: expected x [B, L, " + std::to_string(options_.d_model) +
                                "], got " + shape_str(x.shape()));
  const std::int64_t H = options_.n_heads, L = x.shape()[1];
  Tensor q = split_heads(W_q_->forward(x), H), k = split_heads(W_k_->forward(x), H), v = split_heads(W_v_->forward(x), H);
  const FusedAttention r = fused_attention(q, k, v, causal_mask(L));  // [B, H, L, dh], [B, H, L, L]
  return {merge_heads(r.output), r.weights};
}

Tensor CausalSelfAttention::forward_cached(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache,
                                           std::int64_t length) const {
  NoGradGuard no_grad;
  return attend_cached("CausalSelfAttention::forward_cached", *W_q_, *W_k_, *W_v_, options_.n_heads, x, k_cache,
                       v_cache, length);  // [B, t, C]
}

}  // namespace cppgrad::nn
