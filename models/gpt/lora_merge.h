#pragma once
// A LoRA run's model merged back into a plain GPT (nn::merged_state_dict: W + (alpha / r) B A in every adapted
// matrix), for `cppgrad-gpt merge` and for `export`, which writes plain GPT-2 files only.
#include <memory>
#include <string>

#include "models/gpt/checkpoint.h"
#include "nn/gpt.h"

namespace cppgrad::gpt {

// The plain GPT whose outputs are the adapted model's (up to float rounding); a model without adapters is copied.
std::unique_ptr<nn::GPT> merged_gpt(const nn::GPT& adapted);

// Reads the LoRA checkpoint at `lora_path` (its base too) and writes `out`, a plain checkpoint of the merged model:
// sample, eval, export and train --init read it without the base. Its config is the run's without the LoRA rows, its
// step, history and generators the run's; AdamW starts fresh (the adapters' moments have nowhere to go). Throws
// std::runtime_error "checkpoint <path>: ..." for a checkpoint without adapters, or any the reader refuses.
struct MergeResult {
  std::int64_t step = 0;
  std::int64_t adapted = 0;  // matrices merged
  std::int64_t rank = 0;
};
MergeResult merge_lora_checkpoint(const std::string& lora_path, const std::string& out);

}  // namespace cppgrad::gpt
