#include "nn/multi_head_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/autograd.h"
#include "core/ops/attention.h"
#include "core/ops/select.h"
#include "core/ops/views.h"

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

MultiHeadAttention::KeyValues MultiHeadAttention::append(const KeyValues& cache, const KeyValues& new_kv) {
  if (grad_enabled() && (cache.k.requires_grad() || new_kv.k.requires_grad() || cache.v.requires_grad() ||
                         new_kv.v.requires_grad())) {
    if (!cache.k.defined()) return new_kv;
    return {cat({cache.k, new_kv.k}, 2), cat({cache.v, new_kv.v}, 2)};
  }
  const std::int64_t used = cache.k.defined() ? cache.k.shape()[2] : 0, n = new_kv.k.shape()[2];
  KeyValues out = cache;
  const std::int64_t capacity = cache.k_buffer.defined() ? cache.k_buffer.shape()[2] : 0;
  const bool branched = cache.written && *cache.written != used;  // another cache has written past this one's end
  if (used + n > capacity || branched) {  // new buffers with room for twice the positions, the old ones copied in
    // Stored [B, capacity, H, dh] and viewed as [B, H, capacity, dh]: a new position's heads are then one row of
    // H * dh values per batch item, the layout the projection produced them in, so appending copies B rows of
    // H * dh rather than B * H rows of dh.
    auto position_major = [&](const Tensor& like) {
      const Shape& s = like.shape();  // [B, H, n, d]
      const std::int64_t cap = std::max<std::int64_t>(2 * (used + n), 8);
      return Tensor::empty({s[0], cap, s[1], s[3]}, like.dtype()).transpose(1, 2);
    };
    out.k_buffer = position_major(new_kv.k);
    out.v_buffer = position_major(new_kv.v);
    out.written = std::make_shared<std::int64_t>(0);
    if (used > 0) {
      out.k_buffer.slice(2, 0, used).copy_(cache.k);
      out.v_buffer.slice(2, 0, used).copy_(cache.v);
    }
  }
  out.k_buffer.slice(2, used, used + n).copy_(new_kv.k);
  out.v_buffer.slice(2, used, used + n).copy_(new_kv.v);
  out.k = out.k_buffer.slice(2, 0, used + n);  // [B, H, used + n, dh], views
  out.v = out.v_buffer.slice(2, 0, used + n);
  *out.written = used + n;
  return out;
}

AttentionResult MultiHeadAttention::attend_projected(const Tensor& query, const KeyValues& kv, const Tensor& mask) const {
  Tensor q = split_heads(W_q_->forward(query), options_.n_heads);  // [B, H, Lq, dh]
  const Tensor m = mask.defined() && mask.dim() == 3 ? mask.unsqueeze(1) : mask;  // broadcast over heads
  const FusedAttention r = fused_attention(q, kv.k, kv.v, m);  // out [B, H, Lq, dh], weights [B, H, Lq, Lk]
  return {W_o_->forward(merge_heads(r.output)), r.weights};  // [B, Lq, D]
}

}  // namespace cppgrad::nn
