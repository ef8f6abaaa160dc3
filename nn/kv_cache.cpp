#include "nn/kv_cache.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/ops/attention.h"
#include "core/ops/views.h"
#include "nn/attention.h"
#include "nn/linear.h"

namespace cppgrad::nn {

KVCache::KVCache(std::int64_t n_layer, std::int64_t batch, std::int64_t n_head, std::int64_t capacity,
                 std::int64_t head_dim, DType dtype) {
  if (n_layer <= 0 || batch <= 0 || n_head <= 0 || capacity <= 0 || head_dim <= 0)
    throw std::invalid_argument(fmt::format(
        "KVCache: every size must be positive, got n_layer {}, batch {}, n_head {}, capacity {}, head_dim {}",
        n_layer, batch, n_head, capacity, head_dim));
  // [B, capacity, nh, hd] storage viewed as [B, nh, capacity, hd]; zeroed once (nothing reads past `length`, but a
  // position skipped by a bug then reads zeros, not whatever the memory held)
  auto position_major = [&] {
    return Tensor::zeros({batch, capacity, n_head, head_dim}, dtype).transpose(1, 2);
  };
  layers.reserve(static_cast<std::size_t>(n_layer));
  for (std::int64_t i = 0; i < n_layer; ++i) layers.push_back({position_major(), position_major()});
}

void check_cached_attention_inputs(const char* op, const Tensor& x, const Tensor& k_cache, const Tensor& v_cache,
                                   std::int64_t length, std::int64_t C, std::int64_t nh) {
  if (x.dim() != 3 || x.shape()[2] != C)
    throw std::invalid_argument(fmt::format("{}: expected x [B, t, {}], got {}", op, C, shape_str(x.shape())));
  const std::int64_t B = x.shape()[0], t = x.shape()[1], hs = C / nh;
  for (const Tensor* c : {&k_cache, &v_cache})
    if (c->dim() != 4 || c->shape()[0] != B || c->shape()[1] != nh || c->shape()[3] != hs || c->dtype() != x.dtype())
      throw std::invalid_argument(fmt::format("{}: caches must be [{}, {}, capacity, {}] {} for x {}, got k {} v {}",
                                              op, B, nh, hs, dtype_name(x.dtype()), shape_str(x.shape()),
                                              shape_str(k_cache.shape()), shape_str(v_cache.shape())));
  const std::int64_t capacity = k_cache.shape()[2];
  if (t < 1 || length < 0 || length + t > capacity || v_cache.shape()[2] != capacity)
    throw std::invalid_argument(fmt::format("{}: cannot add {} positions to {} cached, the caches hold {} (k {}, v {})",
                                            op, t, length, capacity, shape_str(k_cache.shape()),
                                            shape_str(v_cache.shape())));
}

Tensor attend_cached(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                     std::int64_t length) {
  const std::int64_t t = q.shape()[2], L = length + t;
  k_cache.slice(2, length, L).copy_(k);
  v_cache.slice(2, length, L).copy_(v);
  // rows length..L-1 of the [L, L] causal mask: new position i sees 0..length+i; one new position sees them all
  const Tensor mask = t == 1 ? Tensor() : causal_mask(L).slice(0, length, L);  // [t, L]
  return fused_attention(q, k_cache.slice(2, 0, L), v_cache.slice(2, 0, L), mask).output;  // [B, nh, t, hs]
}

// The new positions' q, k, v [B, nh, t, hs] as the layouts' forward computes them; k and v go into the caches, and q
// attends to the cached positions 0..length+t-1 through the same fused op, so the two paths share every kernel.
Tensor attend_cached(const char* op, const Linear& W_q, const Linear& W_k, const Linear& W_v, std::int64_t nh,
                     const Tensor& x, const Tensor& k_cache, const Tensor& v_cache, std::int64_t length) {
  check_cached_attention_inputs(op, x, k_cache, v_cache, length, W_q.weight().shape()[1], nh);
  const Tensor q = split_heads(W_q.forward(x), nh), k = split_heads(W_k.forward(x), nh),
               v = split_heads(W_v.forward(x), nh);  // [B, nh, t, hs]
  return merge_heads(attend_cached(q, k, v, k_cache, v_cache, length));  // [B, t, C]
}

}  // namespace cppgrad::nn
