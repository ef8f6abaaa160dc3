#pragma once
// Everything a GPT training run depends on. Checkpoints store it (as JSON in their metadata), so a resumed run can
// check it continues the same experiment, and `sample` / `eval` rebuild the model and the data split from it.
#include <cstdint>
#include <string>
#include <vector>

#include "data/text_corpus.h"
#include "data/tokenizer.h"
#include "nn/gpt.h"
#include "nn/lora.h"
#include "optim/adam.h"
#include "optim/schedule.h"
#include "core/config_table.h"
#include "core/precision.h"

namespace cppgrad::gpt {

// Debian's word list (package wamerican): 104k words, one per line, the default corpus.
inline constexpr const char* kDefaultData = "/usr/share/dict/american-english";

// The largest values a run accepts, from a flag or a checkpoint's config: every size is bounded before anything is
// allocated for it, so a typo cannot ask for terabytes. (The model's own: nn/gpt.h, kMaxWidth and the rest.)
inline constexpr std::int64_t kMaxSteps = 1'000'000'000;
inline constexpr std::int64_t kMaxBatch = 65'536;
inline constexpr std::int64_t kMaxThreads = 256;
inline constexpr std::int64_t kMaxShards = 64;
// GPT-2 xl (1.56B with its tables) fits, so every --preset size imports and samples; training one is bounded by
// kMaxActivations instead.
inline constexpr std::int64_t kMaxParameters = 1'600'000'000;
inline constexpr std::int64_t kMaxActivations = 1'000'000'000;  // floats a step's graph holds, roughly (4 GB)

// GPT-2's four matrices of every block, which LoRA adapts by default (the and peft's usual choice for GPT-2).
inline constexpr const char* kGpt2LoRATargets = "c_attn,attn.c_proj,c_fc,mlp.c_proj";

// The names --format, --weight-decay-on and --schedule take, and the values they stand for.
inline const Choices<data::TextFormat> kFormats = {{"lines", data::TextFormat::lines},
                                                          {"text", data::TextFormat::text}};
inline const Choices<optim::DecayOn> kDecayOn = {{"all", optim::DecayOn::every_parameter},
                                                         {"matrices", optim::DecayOn::matrices}};
inline const Choices<optim::Schedule::Kind> kSchedules = {{"constant", optim::Schedule::Kind::Constant},
                                                                 {"cosine", optim::Schedule::Kind::WarmupCosine}};
// The names --dtype takes: the precision of the linear layers' products (core/precision.h).
inline const Choices<LinearPrecision> kDtypes = {{"float32", LinearPrecision::Float32},
                                                 {"bfloat16", LinearPrecision::BFloat16}};

// The run's fields; each is declared once more, as a row of the table in config.cpp (its flag, help, bound and JSON
// key), and nowhere else. The model's sizes are nn::GPTConfig's, whose rows (nn/gpt.cpp) the table takes in: their
// flags are train's, their JSON the model's own (a checkpoint's "model", apart from this "config").
struct TrainConfig {
  // data
  std::string data = kDefaultData;
  data::TextFormat format = data::TextFormat::lines;  // one sequence per line | a running text, random windows
  std::int64_t context = 0;      // 0: lines -> the longest line + 1; text -> 64
  // The data's characters | GPT-2's BPE | a BPE .model file (the path made absolute). A BPE reads a running text only.
  data::TokenizerName tokenizer;
  // The model's sizes (those of the PyTorch words anchor, gpt/words_pytorch.py). block_size and vocab_size are known
  // after reading the data (model_config), dropout_seed follows from the seed.
  nn::GPTConfig model{.n_layer = 4, .n_head = 4, .n_embd = 64, .dropout = 0.0};
  // optimisation: AdamW, beta1 0.9, eps 1e-8
  std::int64_t steps = 2000;
  std::int64_t batch_size = 32;
  double lr = 5e-4;
  double beta2 = 0.99;  // makemore's; nanoGPT's is 0.95
  optim::Schedule::Kind schedule = optim::Schedule::Kind::Constant;  // or linear warm-up, then cosine to --min-lr
  std::int64_t warmup_steps = 0;
  double min_lr = 0.0;  // where --schedule cosine ends at --steps (nanoGPT's min_lr, often lr / 10)
  double weight_decay = 0.01;
  optim::DecayOn weight_decay_on = optim::DecayOn::every_parameter;  // or nanoGPT's: the matrices only
  double clip_grad = 0.0;  // 0: no clipping
  std::uint64_t seed = 0;  // the split, the initial weights, the batches, dropout
  // The linear layers' products, in training and in every evaluation: float32, or inputs rounded to bfloat16 and
  // summed in float32 (core/precision.h). The weights, AdamW's moments and everything else stay float32.
  LinearPrecision dtype = LinearPrecision::Float32;
  std::int64_t threads = 0;  // 0: OpenMP's default
  // Each batch cut into this many shards (a power of two): the same numbers on any threads. 0: the default,
  // train::default_shards(batch_size), which the run stores in its checkpoint (with_shards).
  std::int64_t shards = 0;
  std::int64_t eval_every = 500;
  // Tokens each evaluation reads from the validation split's start (nanoGPT's eval_iters, in tokens); 0: as many as
  // 2^39 multiply-adds allow (eval_row_bound, models/gpt/trainer.h), so that a large model's evaluation does not
  // swamp its steps.
  std::int64_t eval_tokens = 0;
  // LoRA finetuning (nn/lora.h), off at rank 0: the --init model frozen, adapters of this rank on lora_targets
  // trained; its checkpoint holds the adapters and names its base (models/gpt/checkpoint.h).
  nn::LoRAOptions lora{.rank = 0};
  std::string lora_targets = kGpt2LoRATargets;  // comma-separated Linear names (nn::add_lora's targets)

  // The context for the text mode when --context is not given.
  static constexpr std::int64_t kDefaultTextContext = 64;
  // --context, or when it is 0 the format's default: 0 for lines (make_text_corpus takes the longest line + 1),
  // kDefaultTextContext for a running text.
  std::int64_t corpus_context() const;
  // --lora-targets split at its commas.
  std::vector<std::string> lora_target_names() const;

  nn::GPTConfig model_config(std::int64_t vocab, std::int64_t context) const;
  // Throws std::invalid_argument with a one-line reason naming the flag, for any value out of range.
  void validate() const;
  // Rough sizes, for the limits (exact enough to stop a typo); vocab and context as known after reading the data.
  std::int64_t estimated_parameters(std::int64_t vocab, std::int64_t context) const;
  std::int64_t estimated_activations(std::int64_t vocab, std::int64_t context) const;
  // Throws std::invalid_argument when the model or a step would exceed the limits. A checkpoint read to sample or
  // evaluate checks the model's alone (its batch is not built).
  void check_sizes(std::int64_t vocab, std::int64_t context) const;
  void check_parameters(std::int64_t vocab, std::int64_t context) const;

  // This config with shards chosen: --shards, or when it is 0 train::default_shards of the batch size.
  TrainConfig with_shards() const;

  // The run's JSON: every row but the model's (nn::GPTConfig::to_json writes those).
  std::string to_json() const;
  // The defaults, with every key the JSON has (an older checkpoint lacks the fields added since); `model` keeps its
  // defaults (the checkpoint's "model" has the sizes). Throws std::invalid_argument on a malformed config.
  static TrainConfig from_json(const std::string& json);
  // The keys that must agree for a checkpoint to be resumed (everything but steps, eval_every and threads).
  std::vector<std::string> mismatched_for_resume(const TrainConfig& other) const;
};

// The precision a loaded model runs in (sample, eval): --dtype's text when given (not empty), else the run's own.
// std::invalid_argument naming --dtype and what was typed for any other name.
LinearPrecision dtype_or(const std::string& flag_text, LinearPrecision run_dtype);

// `path` made absolute (unchanged if the working directory cannot be read): a checkpoint stores its data and BPE
// files so, and sample and eval find them from any directory.
std::string absolute_path(const std::string& path);

// The table every field is declared in (config.cpp): the flags of `train`, their --help, the bounds, the JSON.
const ConfigTable<TrainConfig>& config_table();

}  // namespace cppgrad::gpt
