#pragma once
// The sizes of a GPT (nanoGPT's GPTConfig; its defaults are GPT-2 small's). Every Linear and LayerNorm has a bias,
// as GPT-2's (nanoGPT's `bias = True`).
#include <cstdint>

namespace cppgrad::nn {

struct GPTConfig {
  std::int64_t block_size = 1024;  // the context: the longest sequence the model reads (wpe's rows)
  std::int64_t vocab_size = 50304;
  std::int64_t n_layer = 12;
  std::int64_t n_head = 12;
  std::int64_t n_embd = 768;
  double dropout = 0.0;            // after the embeddings, on the attention weights, after each residual branch
  std::uint64_t dropout_seed = 0;  // the dropout masks' own generator
};

// Throws std::invalid_argument naming the first size out of range (n_embd must be a multiple of n_head).
void check_config(const GPTConfig& config);

}  // namespace cppgrad::nn
