#pragma once
// LoRA finetuning of a GPT (nn/lora.h, `train --init CKPT --lora-rank R`): the run's model, and the base a LoRA
// checkpoint names instead of holding it. The checkpoint stores the adapters alone (a few hundred thousand values at
// GPT-2 124M, not 124 million) and the base's absolute path and a hash of its weights; reading it reads the base
// again and refuses one whose weights are not those the adapters were trained on.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/generator.h"
#include "models/gpt/config.h"
#include "nn/gpt.h"
#include "nn/module.h"

namespace cppgrad::gpt {

// A LoRA run's base: the --init checkpoint it finetunes. Stored as a checkpoint's metadata "lora_base":
// {"path": "/abs/base.safetensors", "weights": "fnv1a64:0123456789abcdef"}.
struct LoRABase {
  std::string path;     // absolute
  std::string weights;  // weights_hash of the base's model tensors, as its file holds them
  bool operator==(const LoRABase&) const = default;
  std::string to_json() const;
  // Bounded and checked: std::invalid_argument naming what is wrong.
  static LoRABase from_json(const std::string& json);
};

// The base a LoRA checkpoint names, from its header alone, or nullopt (a plain checkpoint, or a file the checkpoint's
// reader will refuse in its own words): what a command that reads the checkpoint must not overwrite.
std::optional<std::string> lora_base_path(const std::string& checkpoint);

// The refusal of a LoRA checkpoint given to train --init, saying how to finetune what it stands for.
std::runtime_error lora_checkpoint_as_init(const std::string& path, const LoRABase& base);

// "fnv1a64:<16 hex digits>": FNV-1a over the entries in name order, each its name, shape and float32 bytes (in
// 64-bit words, so 124M parameters hash in a fraction of a second).
std::string weights_hash(const nn::StateDict& state);

// The run's model: a GPT of `model` drawn from `init`, then, when config.lora.rank > 0, LoRA adapters on
// config's --lora-targets (drawn from `init` too; masks from the GPT's dropout generator) with every other weight
// frozen. A target that names no layer is a std::invalid_argument naming --lora-targets and the layers there are.
std::unique_ptr<nn::GPT> make_gpt(const nn::GPTConfig& model, const TrainConfig& config, Generator& init);

// make_gpt for a model whose every value a load fills next (a checkpoint's for sample, eval, merge): its values are
// left unset instead of drawn (nn/init.h's SkipInit).
std::unique_ptr<nn::GPT> make_gpt_to_load(const nn::GPTConfig& model, const TrainConfig& config);

}  // namespace cppgrad::gpt
