#include "nn/self_attention.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/softmax.h"
#include "core/ops/views.h"
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
  return {remember_output(r.output), r.weights};
}

CausalSelfAttention::CausalSelfAttention(const CausalSelfAttentionOptions& options, Generator& gen,
                                         std::shared_ptr<Generator> dropout_gen)
    : options_(options) {
  if (options.n_heads <= 0 || options.d_model % options.n_heads != 0)
    throw std::invalid_argument(fmt::format("CausalSelfAttention: d_model ({}) must be divisible by n_heads ({})",
                                            options.d_model, options.n_heads));
  if (options.dropout > 0 && !options.fused_qkv)
    throw std::invalid_argument("CausalSelfAttention: dropout needs fused_qkv (GPT-2's layout)");
  const std::int64_t C = options.d_model;
  if (options.fused_qkv) {
    c_attn_ = register_module("c_attn", std::make_shared<Linear>(LinearOptions{.in = C, .out = 3 * C}, gen));
    c_proj_ = register_module("c_proj", std::make_shared<Linear>(LinearOptions{.in = C, .out = C}, gen));
    if (options.dropout > 0) {
      if (!dropout_gen) throw std::invalid_argument("CausalSelfAttention: dropout > 0 needs a dropout generator");
      attn_dropout_ = register_module("attn_dropout", std::make_shared<Dropout>(options.dropout, dropout_gen));
      resid_dropout_ = register_module("resid_dropout", std::make_shared<Dropout>(options.dropout, dropout_gen));
    }
    return;
  }
  const LinearOptions square{.in = C, .out = C, .bias = false};
  W_q_ = register_module("W_q", std::make_shared<Linear>(square, gen));
  W_k_ = register_module("W_k", std::make_shared<Linear>(square, gen));
  W_v_ = register_module("W_v", std::make_shared<Linear>(square, gen));
}

std::string CausalSelfAttention::extra_repr() const {
  return fmt::format("d_model={}, heads={}{}", options_.d_model, options_.n_heads,
                     options_.fused_qkv ? ", fused qkv" : "");
}

AttentionResult CausalSelfAttention::forward(const Tensor& x) const {
  if (x.dim() != 3 || x.shape()[2] != options_.d_model)
    throw std::invalid_argument("CausalSelfAttention: expected x [B, L, " + std::to_string(options_.d_model) +
                                "], got " + shape_str(x.shape()));
  if (c_attn_) return forward_fused_qkv(x);
  const std::int64_t H = options_.n_heads, L = x.shape()[1];
  Tensor q = split_heads(W_q_->forward(x), H), k = split_heads(W_k_->forward(x), H), v = split_heads(W_v_->forward(x), H);
  const FusedAttention r = fused_attention(q, k, v, causal_mask(L));  // [B, H, L, dh], [B, H, L, L]
  return {remember_output(merge_heads(r.output)), r.weights};
}

// nanoGPT's CausalSelfAttention.forward, with B, T, C, nh, hs its names.
AttentionResult CausalSelfAttention::forward_fused_qkv(const Tensor& x) const {
  const std::int64_t B = x.shape()[0], T = x.shape()[1], C = options_.d_model, nh = options_.n_heads, hs = C / nh;
  // q, k, v = c_attn(x).split(C, dim=2), each viewed as [B, nh, T, hs]: views of one [B, T, 3C] tensor, no copies
  const Tensor qkv = c_attn_->forward(x).view({B, T, 3, nh, hs}).permute({2, 0, 3, 1, 4});  // [3, B, nh, T, hs]
  const Tensor q = qkv.select(0, 0), k = qkv.select(0, 1), v = qkv.select(0, 2);           // [B, nh, T, hs]
  AttentionResult r;
  if (attn_dropout_ && is_training()) {  // dropout on the weights needs them in the graph: the attention in ops
    const Tensor att = softmax(apply_attention_mask(matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(hs))),
                                                    causal_mask(T), "CausalSelfAttention"), -1);  // [B, nh, T, T]
    r = {matmul(attn_dropout_->forward(att), v), att.detach()};                                  // [B, nh, T, hs]
  } else {
    const FusedAttention f = fused_attention_stacked(qkv, causal_mask(T));  // of q, k, v: [B, nh, T, hs], [B, nh, T, T]
    r = {f.output, f.weights};
  }
  Tensor y = c_proj_->forward(merge_heads(r.output));  // re-assemble the heads side by side, project: [B, T, C]
  if (resid_dropout_) y = resid_dropout_->forward(y);
  return {remember_output(y), r.weights};
}

namespace {

void check_cached_inputs(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache, std::int64_t length,
                         const CausalSelfAttentionOptions& o) {
  const char* op = "CausalSelfAttention::forward_cached";
  if (x.dim() != 3 || x.shape()[2] != o.d_model)
    throw std::invalid_argument(fmt::format("{}: expected x [B, t, {}], got {}", op, o.d_model, shape_str(x.shape())));
  const std::int64_t B = x.shape()[0], t = x.shape()[1], H = o.n_heads, dh = o.d_model / H;
  for (const Tensor* c : {&k_cache, &v_cache})
    if (c->dim() != 4 || c->shape()[0] != B || c->shape()[1] != H || c->shape()[3] != dh || c->dtype() != x.dtype())
      throw std::invalid_argument(fmt::format("{}: caches must be [{}, {}, capacity, {}] {} for x {}, got k {} v {}",
                                              op, B, H, dh, dtype_name(x.dtype()), shape_str(x.shape()),
                                              shape_str(k_cache.shape()), shape_str(v_cache.shape())));
  const std::int64_t capacity = k_cache.shape()[2];
  if (t < 1 || length < 0 || length + t > capacity || v_cache.shape()[2] != capacity)
    throw std::invalid_argument(fmt::format("{}: cannot add {} positions to {} cached, the caches hold {} (k {}, v {})",
                                            op, t, length, capacity, shape_str(k_cache.shape()),
                                            shape_str(v_cache.shape())));
}

}  // namespace

// The new positions' q, k, v [B, H, t, dh] as forward() computes them; k and v go into the caches, and q attends to
// the cached positions 0..length+t-1 through the same fused op, so the two paths share every kernel.
Tensor CausalSelfAttention::forward_cached(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache,
                                           std::int64_t length) const {
  check_cached_inputs(x, k_cache, v_cache, length, options_);
  if (attn_dropout_ && is_training())
    throw std::invalid_argument("CausalSelfAttention::forward_cached: decoding applies no dropout; call eval() first");
  NoGradGuard no_grad;
  const std::int64_t B = x.shape()[0], t = x.shape()[1], C = options_.d_model, nh = options_.n_heads, hs = C / nh;
  Tensor q, k, v;  // [B, nh, t, hs]
  if (c_attn_) {
    const Tensor qkv = c_attn_->forward(x).view({B, t, 3, nh, hs}).permute({2, 0, 3, 1, 4});  // [3, B, nh, t, hs]
    q = qkv.select(0, 0), k = qkv.select(0, 1), v = qkv.select(0, 2);
  } else {
    q = split_heads(W_q_->forward(x), nh), k = split_heads(W_k_->forward(x), nh), v = split_heads(W_v_->forward(x), nh);
  }
  const std::int64_t L = length + t;
  k_cache.slice(2, length, L).copy_(k);
  v_cache.slice(2, length, L).copy_(v);
  // rows length..L-1 of the [L, L] causal mask: new position i sees 0..length+i; one new position sees them all
  const Tensor mask = t == 1 ? Tensor() : causal_mask(L).slice(0, length, L);  // [t, L]
  const FusedAttention r = fused_attention(q, k_cache.slice(2, 0, L), v_cache.slice(2, 0, L), mask);  // [B, nh, t, hs]
  const Tensor y = merge_heads(r.output);                                                            // [B, t, C]
  return remember_output(c_proj_ ? c_proj_->forward(y) : y);
}

}  // namespace cppgrad::nn
