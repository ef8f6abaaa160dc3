#pragma once
// `cppgrad-gpt import` and `export`: GPT-2 in Hugging Face's layout (nn/gpt_hf.h) to a cppgrad-gpt checkpoint, which
// sample, eval, attention and train --init / --resume read, and back.
//
//   cppgrad-gpt import --hf model.safetensors --out CKPT [--preset NAME | --heads N] [--tokenizer T] [--data FILE]
//   cppgrad-gpt export --checkpoint CKPT --out model.safetensors [--config-json]
//
// import: the file's shapes give the model; the heads come from --preset, --heads, or a Hugging Face config.json
// beside the file (its n_head; its n_layer, n_embd, n_positions and vocab_size must be the file's). The tokenizer is
// GPT-2's for a vocabulary of 50257 (the checkpoint records the name "gpt2"); another vocabulary needs --tokenizer
// bpe:FILE of that size, or --tokenizer char with --data FILE whose characters are that many (a running text: no
// <b>). The checkpoint is step 0 with a fresh AdamW; its config's data is --data (absolute) or the default word list.
// export: GPT2LMHeadModel's names and layout, {"format": "pt"}, atomically; --config-json also writes GPT-2's
// config.json beside it, so transformers' from_pretrained reads the folder.
#include <cstdint>
#include <string>

#include "nn/gpt.h"

namespace cppgrad::gpt {

// The keys of a Hugging Face GPT-2 config.json that import uses (n_positions: n_ctx in older files).
struct HFConfig {
  std::int64_t n_head = 0, n_layer = 0, n_embd = 0, n_positions = 0, vocab_size = 0;
};
// Reads one (at most 1 MB, read only after its size is known); std::runtime_error "<path>: ..." naming the key that
// is missing or not a whole number in range.
HFConfig read_hf_config(const std::string& path);
// GPT-2's config.json for a model of this shape: transformers' GPT2Config keys (model_type gpt2, gelu_new, ...).
std::string hf_config_json(const nn::GPTConfig& model);

int cmd_import(int argc, char** argv);
int cmd_export(int argc, char** argv);

}  // namespace cppgrad::gpt
