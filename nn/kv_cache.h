#pragma once
// The keys and values a GPT's attention layers computed for the tokens read so far, so that decoding the next
// token runs the model on that token alone (GPT::forward_cached) instead of on the whole prefix again: the new
// position's query meets the cached keys, and only its own key and value are computed and appended.
//
//   layers[i].k, layers[i].v   [B, nh, block_size, hd]   layer i's keys and values; positions 0..length-1 are filled
//
// Every buffer is allocated once, for the whole context (llm.c sizes its activations once per shape the same way), so
// a decoding step allocates nothing here: it writes its t new positions at length..length+t-1.
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace cppgrad::nn {

struct KVCache {
  struct Layer {
    // [B, nh, block_size, hd] views of buffers stored position-major, [B, block_size, nh, hd]: a new position's
    // keys for all heads are then one row of nh * hd = C values per batch item, the order c_attn produces them in,
    // so appending copies B rows of C rather than B * nh rows of hd.
    Tensor k, v;
  };
  std::vector<Layer> layers;
  std::int64_t length = 0;  // positions 0..length-1 hold the keys and values of the tokens read so far

  // n_layer layers of [batch, n_head, block_size, head_dim] keys and values, zeros, length 0.
  KVCache(std::int64_t n_layer, std::int64_t batch, std::int64_t n_head, std::int64_t block_size,
          std::int64_t head_dim, DType dtype);

  std::int64_t batch() const { return layers.empty() ? 0 : layers.front().k.shape()[0]; }
  std::int64_t capacity() const { return layers.empty() ? 0 : layers.front().k.shape()[2]; }  // block_size
  // Starts a new sequence in the same buffers.
  void clear() { length = 0; }
};

// What an attention layer's forward_cached needs (GPTAttention's, CausalSelfAttention's): x [B, t, C] with t >= 1,
// and caches [B, nh, capacity, C / nh] of x's dtype with room for t more positions after `length`. Throws
// std::invalid_argument naming `op` and every shape.
void check_cached_attention_inputs(const char* op, const Tensor& x, const Tensor& k_cache, const Tensor& v_cache,
                                   std::int64_t length, std::int64_t C, std::int64_t nh);

// The step every cached attention shares: writes the new keys and values k, v [B, nh, t, hs] at positions
// length..length+t-1 of the caches, then the new queries q [B, nh, t, hs] attend to positions 0..length+t-1
// (causally among the new ones, so a whole prompt can be fed at once) -> [B, nh, t, hs]. Call under no_grad.
Tensor attend_cached(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                     std::int64_t length);

}  // namespace cppgrad::nn
