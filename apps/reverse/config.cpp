#include "reverse/config.h"

#include "cli/json_fields.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace cppgrad::reverse {

using nlohmann::json;

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
          .cross_attention = nn::parse_cross_attention(attention),
          .dropout_seed = seed + 1};
}

namespace {

// lo <= v <= hi, or std::invalid_argument naming the flag.
void check_range(const char* flag, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi) throw std::invalid_argument(fmt::format("--{} must be in {}..{}, got {}", flag, lo, hi, v));
}

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
  check_range("epochs", epochs, 1, kMaxEpochs);
  check_range("batch-size", batch_size, 1, kMaxBatch);
  check_range("vocab", vocab, 3, kMaxVocab);
  check_range("seq-len", seq_len, 1, kMaxSeqLen);
  check_range("min-len", min_len, 0, kMaxSeqLen);
  check_range("max-len", max_len, 0, kMaxSeqLen);
  check_range("train-size", train_size, 1, kMaxExamples);
  check_range("test-size", test_size, 1, kMaxExamples);
  check_range("d-model", d_model, 1, kMaxWidth);
  check_range("heads", heads, 1, d_model);
  check_range("d-ff", d_ff, 1, kMaxWidth);
  check_range("positions", positions, 1, kMaxSeqLen + 2);
  check_range("encoder-layers", encoder_layers, 0, kMaxLayers);
  check_range("decoder-layers", decoder_layers, 1, kMaxLayers);
  check_range("warmup-steps", warmup_steps, 0, kMaxWarmupSteps);
  check_range("threads", threads, 0, kMaxThreads);
  check_range("shards", shards, 1, kMaxShards);
  if (!std::has_single_bit(static_cast<std::uint64_t>(shards)))
    throw std::invalid_argument(fmt::format("--shards must be a power of two (1, 2, 4, 8, ...), got {}", shards));
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
  if (!(lr > 0) || !std::isfinite(lr)) throw std::invalid_argument(fmt::format("--lr must be a positive number, got {}", lr));
  if (!(dropout >= 0 && dropout < 1)) throw std::invalid_argument(fmt::format("--dropout must be in [0, 1), got {}", dropout));
  if (!(clip_grad >= 0) || !std::isfinite(clip_grad))
    throw std::invalid_argument(fmt::format("--clip-grad must be a number >= 0, got {}", clip_grad));
  if (!(weight_decay >= 0) || !std::isfinite(weight_decay))
    throw std::invalid_argument(fmt::format("--weight-decay must be a number >= 0, got {}", weight_decay));
  if (!(momentum >= 0 && momentum < 1)) throw std::invalid_argument(fmt::format("momentum must be in [0, 1), got {}", momentum));
  if (optimizer != "adam" && optimizer != "adamw" && optimizer != "sgd")
    throw std::invalid_argument("--optimizer must be adam, adamw or sgd, got '" + optimizer + "'");
  if (schedule != "constant" && schedule != "step" && schedule != "cosine")
    throw std::invalid_argument("--schedule must be constant, step or cosine, got '" + schedule + "'");
  if (arch != "transformer" && arch != "tutorial")
    throw std::invalid_argument("--arch must be transformer or tutorial, got '" + arch + "'");
  nn::parse_cross_attention(attention);
  if ((min_len > 0) != (max_len > 0))
    throw std::invalid_argument("--min-len and --max-len go together (variable lengths), or neither (--seq-len)");
  const data::ReversalConfig d = data_config();
  d.validate();
  if (d.target_len() > positions)
    throw std::invalid_argument(fmt::format("sequences of length {} need {} positions but the position table has {} "
                                            "(raise --positions)", d.max_len, d.target_len(), positions));
}

std::string TrainConfig::to_json() const {
  json j = {{"vocab", vocab},       {"seq_len", seq_len},
            {"min_len", min_len},   {"max_len", max_len},
            {"train_size", train_size}, {"test_size", test_size},
            {"d_model", d_model},   {"heads", heads},
            {"encoder_layers", encoder_layers}, {"decoder_layers", decoder_layers},
            {"d_ff", d_ff},         {"positions", positions},
            {"dropout", dropout},   {"attention", attention},
            {"arch", arch},         {"epochs", epochs},
            {"batch_size", batch_size}, {"lr", lr},
            {"optimizer", optimizer}, {"weight_decay", weight_decay},
            {"momentum", momentum}, {"schedule", schedule},
            {"warmup_steps", warmup_steps}, {"clip_grad", clip_grad},
            {"seed", seed},         {"threads", threads},
            {"shards", shards}};
  return j.dump();
}

TrainConfig TrainConfig::from_json(const std::string& text) {
  TrainConfig c;
  try {
    const json j = json::parse(text);
    auto get = [&](const char* key, auto& field) { cli::read_json_field(j, key, field); };
    get("vocab", c.vocab), get("seq_len", c.seq_len), get("min_len", c.min_len), get("max_len", c.max_len);
    get("train_size", c.train_size), get("test_size", c.test_size), get("d_model", c.d_model), get("heads", c.heads);
    get("encoder_layers", c.encoder_layers), get("decoder_layers", c.decoder_layers), get("d_ff", c.d_ff);
    get("positions", c.positions), get("dropout", c.dropout), get("attention", c.attention), get("arch", c.arch);
    get("epochs", c.epochs), get("batch_size", c.batch_size), get("lr", c.lr), get("optimizer", c.optimizer);
    get("weight_decay", c.weight_decay), get("momentum", c.momentum), get("schedule", c.schedule);
    get("warmup_steps", c.warmup_steps), get("clip_grad", c.clip_grad), get("seed", c.seed), get("threads", c.threads);
    get("shards", c.shards);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("malformed config: ") + e.what());
  }
  return c;
}

std::vector<std::string> TrainConfig::mismatched_for_resume(const TrainConfig& other) const {
  const json a = json::parse(to_json()), b = json::parse(other.to_json());
  std::vector<std::string> keys;
  for (const auto& [key, value] : a.items())
    if (key != "epochs" && key != "threads" && b.at(key) != value) keys.push_back(key);
  return keys;
}

}  // namespace cppgrad::reverse
