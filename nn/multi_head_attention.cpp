#include "nn/multi_head_attention.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/attention.h"
#include "core/ops/views.h"
#include "nn/kv_cache.h"

namespace cppgrad::nn {

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& options, Generator& gen) : options_(options) {
  if (options.n_heads <= 0 || options.d_model <= 0 || options.d_model % options.n_heads != 0)
    throw std::invalid_argument(fmt::format(
        "MultiHeadAttention: d_model ({}) must be divisible by n_heads ({}): each head gets d_model / n_heads dims",
        options.d_model, options.n_heads));
  const LinearOptions square{.in = options.d_model, .out = options.d_model, .bias = false};
  W_q_ = register_module("W_q", std::make_shared<Linear>(square, gen));
  W_k_ = register_module("W_k", std::make_shared<Linear>(square, gen));
  W_v_ = register_module("W_v", std::make_shared<Linear>(square, gen));
  W_o_ = register_module("W_o", std::make_shared<Linear>(square, gen));
}

std::string MultiHeadAttention::extra_repr() const {
  return fmt::format("d_model={}, heads={}", options_.d_model, options_.n_heads);
}

AttentionResult MultiHeadAttention::attend(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const Tensor& mask) const {
  if (query.dim() != 3 || key.dim() != 3 || value.dim() != 3 || key.shape() != value.shape() ||
      query.shape()[0] != key.shape()[0])
    throw std::invalid_argument("MultiHeadAttention: expected query [B, Lq, D] and key = value [B, Lk, D], got query " +
                                shape_str(query.shape()) + ", key " + shape_str(key.shape()) + ", value " +
                                shape_str(value.shape()));
  return attend_projected(query, project_key_values(key, value), mask);
}

MultiHeadAttention::KeyValues MultiHeadAttention::project_key_values(const Tensor& key, const Tensor& value) const {
  const std::int64_t H = options_.n_heads;
  return {split_heads(W_k_->forward(key), H), split_heads(W_v_->forward(value), H)};  // [B, H, Lk, dh] each
}

AttentionResult MultiHeadAttention::attend_projected(const Tensor& query, const KeyValues& kv, const Tensor& mask) const {
  Tensor q = split_heads(W_q_->forward(query), options_.n_heads);  // [B, H, Lq, dh]
  const Tensor m = mask.defined() && mask.dim() == 3 ? mask.unsqueeze(1) : mask;  // broadcast over heads
  const FusedAttention r = fused_attention(q, kv.k, kv.v, m);  // out [B, H, Lq, dh], weights [B, H, Lq, Lk]
  return {W_o_->forward(merge_heads(r.output)), r.weights};  // [B, Lq, D]
}

// The cached step (nn/kv_cache.h) shared with CausalSelfAttention, then W_o.
Tensor MultiHeadAttention::forward_cached(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache,
                                          std::int64_t length) const {
  NoGradGuard no_grad;
  return W_o_->forward(attend_cached("MultiHeadAttention::forward_cached", *W_q_, *W_k_, *W_v_, options_.n_heads, x,
                                     k_cache, v_cache, length));  // [B, t, D]
}

}  // namespace cppgrad::nn
