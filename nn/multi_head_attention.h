#pragma once
#include <memory>
#include <utility>

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
  // reuse them (the memory's for cross-attention; its own past positions', growing, for self-attention).
  struct KeyValues {
    KeyValues() = default;
    KeyValues(Tensor keys, Tensor values) : k(std::move(keys)), v(std::move(values)) {}
    Tensor k, v;  // [B, H, Lk, dh]
    // Decoding caches only: [B, H, capacity, dh] views of buffers stored position-major, [B, capacity, H, dh], that
    // k and v are views into (see append).
    Tensor k_buffer, v_buffer;
    // Positions written into the buffers so far, shared by every cache viewing them. A cache shorter than that
    // (a second branch from the same cache, as beam search makes) must not write into them: it would overwrite
    // the other branch's newest position, so it takes buffers of its own.
    std::shared_ptr<std::int64_t> written;
  };
  KeyValues project_key_values(const Tensor& key, const Tensor& value) const;  // key, value: [B, Lk, D]
  // Appends new positions' keys and values to a cache (an empty cache starts it). new_kv: [B, H, n, dh]
  // Outside grad mode (decoding) the cache keeps buffers with room to spare, doubling when full as std::vector
  // does, and writes only the new positions: T steps copy O(T) values, where concatenating would copy O(T^2).
  // With grad mode on it concatenates, so gradients flow to every cached position.
  static KeyValues append(const KeyValues& cache, const KeyValues& new_kv);
  // attend() with projected keys and values: query [B, Lq, D] -> output [B, Lq, D], weights [B, H, Lq, Lk]
  AttentionResult attend_projected(const Tensor& query, const KeyValues& kv, const Tensor& mask = Tensor()) const;

 private:
  MultiHeadAttentionOptions options_;
  std::shared_ptr<Linear> W_q_, W_k_, W_v_, W_o_;
};

}  // namespace cppgrad::nn
