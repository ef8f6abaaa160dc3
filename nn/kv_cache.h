#pragma once
// The keys and values a causal self-attention computed for the positions read so far, so that decoding the next
// token runs the model on that token alone instead of on the whole prefix again: the new position's query meets the
// cached keys, and only its own key and value are computed and appended. One design for both models: a GPT's layers
// (GPT::forward_cached) and the reversal transformer's decoder layers (Seq2SeqTransformer::decode_step).
//
//   layers[i].k, layers[i].v   [B, nh, capacity, hd]   layer i's keys and values; positions 0..length-1 are filled
//
// Every buffer is allocated once, for the longest sequence the decode can reach (a GPT's context, block_size; a
// decoder's target length), as llm.c sizes its activations once per shape, so a decoding step allocates nothing
// here: it writes its t new positions at length..length+t-1. Copying a KVCache (or a Layer) shares its buffers: a
// second branch from one cache (beam search) needs buffers of its own.
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace cppgrad::nn {

class Linear;

struct KVCache {
  struct Layer {
    // [B, nh, capacity, hd] views of buffers stored position-major, [B, capacity, nh, hd]: a new position's keys
    // for all heads are then one row of nh * hd = C values per batch item, the order the projection produces them
    // in, so appending copies B rows of C rather than B * nh rows of hd.
    Tensor k, v;
  };
  std::vector<Layer> layers;
  std::int64_t length = 0;  // positions 0..length-1 hold the keys and values of the tokens read so far

  // n_layer layers of [batch, n_head, capacity, head_dim] keys and values, zeros, length 0.
  KVCache(std::int64_t n_layer, std::int64_t batch, std::int64_t n_head, std::int64_t capacity,
          std::int64_t head_dim, DType dtype);

  std::int64_t batch() const { return layers.empty() ? 0 : layers.front().k.shape()[0]; }
  std::int64_t capacity() const { return layers.empty() ? 0 : layers.front().k.shape()[2]; }
  // Starts a new sequence in the same buffers.
  void clear() { length = 0; }
};

// What an attention layer's forward_cached needs (GPTAttention's, CausalSelfAttention's, MultiHeadAttention's):
// x [B, t, C] with t >= 1, and caches [B, nh, capacity, C / nh] of x's dtype with room for t more positions after
// `length`. Throws std::invalid_argument naming `op` and every shape.
void check_cached_attention_inputs(const char* op, const Tensor& x, const Tensor& k_cache, const Tensor& v_cache,
                                   std::int64_t length, std::int64_t C, std::int64_t nh);

// The step every cached attention shares: writes the new keys and values k, v [B, nh, t, hs] at positions
// length..length+t-1 of the caches, then the new queries q [B, nh, t, hs] attend to positions 0..length+t-1
// (causally among the new ones, so a whole prompt can be fed at once) -> [B, nh, t, hs]. Call under no_grad.
Tensor attend_cached(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                     std::int64_t length);

// The same step for a layout with separate bias-free projections W_q, W_k, W_v [C, C] (seed 003's
// CausalSelfAttention, MultiHeadAttention): x [B, t, C] is checked (check_cached_attention_inputs, naming `op`),
// projected, split into nh heads and attended -> the heads merged, [B, t, C], before any output projection.
// Call under no_grad.
Tensor attend_cached(const char* op, const Linear& W_q, const Linear& W_k, const Linear& W_v, std::int64_t nh,
                     const Tensor& x, const Tensor& k_cache, const Tensor& v_cache, std::int64_t length);

}  // namespace cppgrad::nn
