#pragma once
// The model's shape fixed from outside the flags: `train --preset gpt2` (GPT-2's sizes, nn/gpt_hf.h) or
// `train --init CKPT` (the checkpoint's). Neither is stored in a checkpoint: the shape it sets is.
//
// The rule, one for both: the shape's flags (shape_flags) take the preset's or the file's values; a shape flag typed
// beside them must say the same, else the run is refused naming both (nanoGPT lets a later setting win silently; a
// --heads 4 beside --preset gpt2 is more likely a mistake than a wish).
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpt/config.h"

namespace cppgrad::gpt {

// The flags a preset or an --init file fixes: every flag of the model's own rows (nn::gpt_config_table) but training's
// (FieldRole::training: --dropout, which a finetune may set, as nanoGPT's from_pretrained lets it alone be
// overridden), and the run's that shape what the model reads: --context, --tokenizer, --format. A field added to
// nn::GPTConfig with a flag is among them unless its row says it is training's.
std::vector<std::string> shape_flags();

// The TrainConfig fields of one of GPT-2's sizes: d_model, heads, layers, context 1024, --tokenizer gpt2, --format
// text. std::invalid_argument "--preset NAME: ..." listing the names for any other.
TrainConfig preset_config(std::string_view name);
// "gpt2 (124M: 12 layers, 12 heads, 768 wide), gpt2-medium (...), ...": --help's list.
std::string presets_help();

// `c` with the shape_flags fields of `shape`. `given`: the flags typed; one of them whose value in `c` differs from
// `shape`'s is a std::invalid_argument naming both, e.g. "--heads 4 disagrees with --preset gpt2, which sets --heads
// 12 (give one or the other)"; `source` says where the shape came from ("--preset gpt2"). The one exception: a typed
// --context shorter than the shape's is kept, the model's position table cropped to its first rows (nanoGPT's
// crop_block_size: GPT-2 finetuned on windows of 256 tokens); a longer one is refused.
void pin_shape(TrainConfig& c, const TrainConfig& shape, const std::set<std::string>& given, const std::string& source);

}  // namespace cppgrad::gpt
