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


namespace cppgrad::gpt {

int cmd_import(int argc, char** argv);
int cmd_export(int argc, char** argv);

}  // namespace cppgrad::gpt
