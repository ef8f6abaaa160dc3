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
  return {.src_vocab = d.vocab,
          .tgt_vocab = d.decoder_vocab(),
          .out_vocab = d.output_vocab(),
          .d_model = d_model,
          .n_heads = heads,
          .n_encoder_layers = encoder_layers,
          .n_decoder_layers = decoder_layers,
          .d_ff = d_ff,
          .max_len = positions,
          .dropout = dropout,
          .cross_attention = attention,
          .dropout_seed = seed + 1};
}

const ConfigTable<TrainConfig>& config_table() {
  const auto row = [](auto&&... args) { return field<TrainConfig>(std::forward<decltype(args)>(args)...); };
  const auto choice = [](auto&&... args) { return cppgrad::choice<TrainConfig>(std::forward<decltype(args)>(args)...); };
  static const ConfigTable<TrainConfig> table = {
      row("vocab", "data", "vocabulary size: tokens 1..vocab-1, 0 is PAD", at(&TrainConfig::vocab), in_range(3, kMaxVocab)),
      row("seq-len", "data", "sequence length (fixed)", at(&TrainConfig::seq_len), in_range(1, kMaxSeqLen)),
      row("min-len", "data", "shortest sequence (variable lengths, with --max-len)", at(&TrainConfig::min_len),
          in_range(0, kMaxSeqLen)),
      row("max-len", "data", "longest sequence (variable lengths, with --min-len)", at(&TrainConfig::max_len),
          in_range(0, kMaxSeqLen)),
      row("train-size", "data", "training sequences", at(&TrainConfig::train_size), in_range(1, kMaxExamples)),
      row("test-size", "data", "test sequences (never in the training set)", at(&TrainConfig::test_size),
          in_range(1, kMaxExamples)),
      row("d-model", "model", "model width", at(&TrainConfig::d_model), in_range(1, kMaxWidth)),
      row("heads", "model", "attention heads (must divide d-model)", at(&TrainConfig::heads), in_range(1, kMaxWidth)),
      row("encoder-layers", "model", "encoder layers", at(&TrainConfig::encoder_layers), in_range(0, kMaxLayers)),
      row("decoder-layers", "model", "decoder layers", at(&TrainConfig::decoder_layers), in_range(1, kMaxLayers)),
      row("d-ff", "model", "feed-forward width", at(&TrainConfig::d_ff), in_range(1, kMaxWidth)),
      row("positions", "model", "rows of the learned position tables", at(&TrainConfig::positions),
          in_range(1, kMaxSeqLen + 2)),
      row("dropout", "model", "dropout probability", at(&TrainConfig::dropout), in_interval(0, 1, true)),
      choice("arch", "model", "transformer (the honest model) | tutorial (the seed tutorial's model, fed the target)",
             at(&TrainConfig::arch), kArchs),
      choice("attention", "model", "cross-attention: scaled_dot | additive | multiplicative", at(&TrainConfig::attention),
             kAttentions),
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
  };
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
  const std::int64_t attention = mul_sat(4, mul_sat(d_model, d_model)), ffn = mul_sat(2, mul_sat(d_model, d_ff));
  const std::int64_t layers = mul_sat(encoder_layers + decoder_layers, attention + ffn) + mul_sat(decoder_layers, attention);
  const std::int64_t tables = mul_sat(3 * vocab + 2 * positions, d_model);  // embeddings, output, positions
  return layers + tables;
}

std::int64_t TrainConfig::estimated_activations() const {
  // Per layer and token, about 12 vectors of width d_model and 2 of d_ff, plus the attention weights (heads x
  // length); the output logits per token.
  const std::int64_t len = std::max(seq_len, max_len) + 1;
  const std::int64_t per_token = mul_sat(encoder_layers + 2 * decoder_layers,
                                         12 * d_model + 2 * d_ff + 3 * mul_sat(heads, len)) + 2 * vocab;
  return mul_sat(mul_sat(batch_size, len), per_token);
}

void TrainConfig::validate() const {
  config_table().check(*this);
  check_in_range("heads", heads, 1, d_model);
  const std::int64_t tokens = mul_sat(train_size + test_size, std::max(seq_len, max_len) + 2);
  if (tokens > kMaxDataTokens)
    throw std::invalid_argument(fmt::format("--train-size {} and --test-size {} of length {} make {} tokens, more than "
                                            "the limit {}", train_size, test_size, std::max(seq_len, max_len), tokens,
                                            kMaxDataTokens));
  if (const std::int64_t p = estimated_parameters(); p > kMaxParameters)
    throw std::invalid_argument(fmt::format("the model would have about {} parameters, more than the limit {}: lower "
                                            "--d-model ({}), --d-ff ({}), the layers or --vocab", p, kMaxParameters,
                                            d_model, d_ff));
  if (const std::int64_t a = estimated_activations(); a > kMaxActivations)
    throw std::invalid_argument(fmt::format("one training step would hold about {} activations, more than the limit {}: "
                                            "lower --batch-size ({}), the length, --d-model or the layers", a,
                                            kMaxActivations, batch_size));
  if (d_model % heads != 0)
    throw std::invalid_argument(fmt::format("--heads {} does not divide --d-model {}: each head gets d_model / heads dims",
                                            heads, d_model));
  if ((min_len > 0) != (max_len > 0))
    throw std::invalid_argument("--min-len and --max-len go together (variable lengths), or neither (--seq-len)");
  const data::ReversalConfig d = data_config();
  d.validate();
  if (d.target_len() > positions)
    throw std::invalid_argument(fmt::format("sequences of length {} need {} positions but the position table has {} "
                                            "(raise --positions)", d.max_len, d.target_len(), positions));
}

TrainConfig TrainConfig::with_shards() const { return train::with_shards(*this); }

std::string TrainConfig::to_json() const { return config_table().to_json(*this); }

TrainConfig TrainConfig::from_json(const std::string& text) { return train::run_config_from_json(config_table(), text); }

std::vector<std::string> TrainConfig::mismatched_for_resume(const TrainConfig& other) const {
  return config_table().mismatched(*this, other);
}

}  // namespace cppgrad::reverse
