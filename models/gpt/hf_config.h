#pragma once
// GPT-2's config.json, Hugging Face's description of a model beside its model.safetensors: read by `cppgrad-gpt
// import` (the heads, which the weights' shapes cannot tell) and written by `export --config-json`, so
// transformers' from_pretrained reads the folder.
#include <cstdint>
#include <string>

#include "nn/gpt.h"

namespace cppgrad::gpt {

// GPT-2's vocabulary (256 bytes, 50,000 merges, <|endoftext|>): import takes GPT-2's tokenizer for it, and export's
// config.json names <|endoftext|> as bos and eos.
inline constexpr std::int64_t kGpt2Vocab = 50257;

// The keys of a Hugging Face GPT-2 config.json that import uses (n_positions: n_ctx in older files).
struct HFConfig {
  std::int64_t n_head = 0, n_layer = 0, n_embd = 0, n_positions = 0, vocab_size = 0;
};
// Reads one (at most 1 MB, read only after its size is known); std::runtime_error "<path>: ..." naming the key that
// is missing or not a whole number in range.
HFConfig read_hf_config(const std::string& path);
// GPT-2's config.json for a model of this shape: transformers' GPT2Config keys (model_type gpt2, gelu_new, ...).
std::string hf_config_json(const nn::GPTConfig& model);

}  // namespace cppgrad::gpt
