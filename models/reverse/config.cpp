#include "models/reverse/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "train/run_config.h"

namespace cppgrad::reverse {

data::ReversalConfig TrainConfig::data_config() const {
  const std::int64_t lo = min_len > 0 ? min_len : seq_len, hi = max_len > 0 ? max_len : seq_len;
  return {.vocab = vocab, .min_len = lo, .max_len = hi, .train_size = train_size, .test_size = test_size, .seed = seed};
}

nn::Seq2SeqOptions TrainConfig::model_options() const {
  const data::ReversalConfig d = data_config();
  nn::Seq2SeqOptions o = model;
  o.src_vocab = d.vocab, o.tgt_vocab = d.decoder_vocab(), o.out_vocab = d.output_vocab(), o.dropout_seed = seed + 1;
  return o;
}

const ConfigTable<TrainConfig>& config_table() {
  const auto row = [](auto&&... args) { return field<TrainConfig>(std::forward<decltype(args)>(args)...); };
  const auto choice = [](auto&&... args) { return cppgrad::choice<TrainConfig>(std::forward<decltype(args)>(args)...); };
  static const ConfigTable<TrainConfig> table(join<TrainConfig>({{
      row("vocab", "data", "vocabulary size: tokens 1..vocab-1, 0 is PAD", at(&TrainConfig::vocab), in_range(3, kMaxVocab)),
      row("seq-len", "data", "sequence length (fixed)", at(&TrainConfig::seq_len), in_range(1, kMaxSeqLen)),
      row("min-len", "data", "shortest sequence (variable lengths, with --max-len)", at(&TrainConfig::min_len),
          in_range(0, kMaxSeqLen)),
      row("max-len", "data", "longest sequence (variable lengths, with --min-len)", at(&TrainConfig::max_len),
          in_range(0, kMaxSeqLen)),
      row("train-size", "data", "training sequences", at(&TrainConfig::train_size), in_range(1, kMaxExamples)),
      row("test-size", "data", "test sequences (never in the training set)", at(&TrainConfig::test_size),
          in_range(1, kMaxExamples)),
  }, nested(nn::seq2seq_options_table(), &TrainConfig::model), {
      choice("arch", "model", "transformer (the honest model) | tutorial (the seed tutorial's model, fed the target)",
             at(&TrainConfig::arch), kArchs),
      row("epochs", "training", "epochs", at(&TrainConfig::epochs), in_range(1, kMaxEpochs), OnResume::may_change),
      row("batch-size", "training", "batch size", at(&TrainConfig::batch_size), in_range(1, kMaxBatch)),
      row("lr", "training", "learning rate", at(&TrainConfig::lr), positive()),
      choice("optimizer", "training", "adam | adamw | sgd", at(&TrainConfig::optimizer), kOptimizers),
      row("momentum", "training", "momentum of --optimizer sgd", at(&TrainConfig::momentum),
          in_interval(0, 1, true)),
      row("weight-decay", "training", "weight decay (L2 for adam/sgd, decoupled for adamw)",
          at(&TrainConfig::weight_decay), non_negative()),
      choice("schedule", "training", "learning rate: constant | step (halve every 10 epochs) | cosine (warm-up then "
             "cosine)", at(&TrainConfig::schedule), kSchedules),
      row("warmup-steps", "training", "linear warm-up steps for --schedule cosine", at(&TrainConfig::warmup_steps),
          in_range(0, kMaxWarmupSteps)),
      row("clip-grad", "training", "clip the global gradient norm to this (0: off)", at(&TrainConfig::clip_grad),
          non_negative()),
      row("seed", "training", "seed of the data, the initial weights and the shuffles", at(&TrainConfig::seed)),
      row("threads", "training", "threads; each runs shards of every batch on their own model replicas (0: OpenMP's "
          "default)", at(&TrainConfig::threads), in_range(0, kMaxThreads), OnResume::may_change),
      row("shards", "training", "each batch is cut into this many shards (a power of two), their gradients summed in a "
          "fixed tree: the same weights on any number of threads or processes (1: the whole batch on the model, the "
          "plain step; 0: from the batch size, 2 for 2 rows or more)", at(&TrainConfig::shards),
          zero_or_power_of_two_in(1, kMaxShards)),
  }}));
  return table;
}

namespace {

// a * b, saturating at INT64_MAX (all inputs are already range-checked and non-negative).
std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<std::int64_t>::max() : out;
}

}  // namespace

std::int64_t TrainConfig::estimated_parameters() const {
  // Per layer: 4 d^2 attention projections (cross-attention: 4 more in the decoder), 2 d d_ff feed-forward.
  const std::int64_t d = model.d_model;
  const std::int64_t attention = mul_sat(4, mul_sat(d, d)), ffn = mul_sat(2, mul_sat(d, model.d_ff));
  const std::int64_t layers = mul_sat(model.n_encoder_layers + model.n_decoder_layers, attention + ffn) +
                              mul_sat(model.n_decoder_layers, attention);
  const std::int64_t tables = mul_sat(3 * vocab + 2 * model.max_len, model.d_model);  // embeddings, output, positions
  return layers + tables;
}

std::int64_t TrainConfig::estimated_activations() const {
  // Per layer and token, about 12 vectors of width d_model and 2 of d_ff, plus the attention weights (heads x
  // length); the output logits per token.
  const std::int64_t len = std::max(seq_len, max_len) + 1;
  const std::int64_t per_token = mul_sat(model.n_encoder_layers + 2 * model.n_decoder_layers,
                                         12 * model.d_model + 2 * model.d_ff + 3 * mul_sat(model.n_heads, len)) + 2 * vocab;
  return mul_sat(mul_sat(batch_size, len), per_token);
}

void TrainConfig::validate() const {
  config_table().check(*this);
  check_in_range("--heads", model.n_heads, 1, model.d_model);
  const std::int64_t tokens = mul_sat(train_size + test_size, std::max(seq_len, max_len) + 2);
  if (tokens > kMaxDataTokens)
    throw std::invalid_argument(fmt::format("--train-size {} and --test-size {} of length {} make {} tokens, more than "
                                            "the limit {}", train_size, test_size, std::max(seq_len, max_len), tokens,
                                            kMaxDataTokens));
  if (const std::int64_t p = estimated_parameters(); p > kMaxParameters)
    throw std::invalid_argument(fmt::format("the model would have about {} parameters, more than the limit {}: lower "
                                            "--d-model ({}), --d-ff ({}), the layers or --vocab", p, kMaxParameters,
                                            model.d_model, model.d_ff));
  if (const std::int64_t a = estimated_activations(); a > kMaxActivations)
    throw std::invalid_argument(fmt::format("one training step would hold about {} activations, more than the limit {}: "
                                            "lower --batch-size ({}), the length, --d-model or the layers", a,
                                            kMaxActivations, batch_size));
  nn::check_heads_divide(model.n_heads, model.d_model, "--heads", "--d-model");
  if ((min_len > 0) != (max_len > 0))
    throw std::invalid_argument("--min-len and --max-len go together (variable lengths), or neither (--seq-len)");
  const data::ReversalConfig d = data_config();
  d.validate();
  if (d.target_len() > model.max_len)
    throw std::invalid_argument(fmt::format("sequences of length {} need {} positions but the position table has {} "
                                            "(raise --positions)", d.max_len, d.target_len(), model.max_len));
}

TrainConfig TrainConfig::with_shards() const { return train::with_shards(*this); }

std::string TrainConfig::to_json() const { return config_table().to_json(*this); }

TrainConfig TrainConfig::from_json(const std::string& text) { return train::run_config_from_json(config_table(), text); }

std::vector<std::string> TrainConfig::mismatched_for_resume(const TrainConfig& other) const {
  return config_table().mismatched(*this, other);
}

}  // namespace cppgrad::reverse
