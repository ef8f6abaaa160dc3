#include "gpt/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/json_fields.h"

namespace cppgrad::gpt {

using nlohmann::json;

nn::GPTConfig TrainConfig::model_config(std::int64_t vocab, std::int64_t context_size) const {
  return {.block_size = context_size,
          .vocab_size = vocab,
          .n_layer = layers,
          .n_head = heads,
          .n_embd = d_model,
          .dropout = dropout,
          .dropout_seed = seed + 1};
}

namespace {

void check_range(const char* flag, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi) throw std::invalid_argument(fmt::format("--{} must be in {}..{}, got {}", flag, lo, hi, v));
}

void check_number(const char* flag, double v, double lo, double hi, bool hi_open) {
  if (!std::isfinite(v) || v < lo || (hi_open ? v >= hi : v > hi))
    throw std::invalid_argument(fmt::format("--{} must be in [{:g}, {:g}{}, got {:g}", flag, lo, hi, hi_open ? ")" : "]", v));
}

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
  if (data.empty()) throw std::invalid_argument("--data must name a file");
  if (format != "lines" && format != "text")
    throw std::invalid_argument("--format must be lines or text, got '" + format + "'");
  check_range("context", context, 0, kMaxContext);
  check_range("d-model", d_model, 1, kMaxWidth);
  check_range("heads", heads, 1, kMaxHeads);
  check_range("layers", layers, 1, kMaxLayers);
  check_number("dropout", dropout, 0, 1, /*hi_open=*/true);
  check_range("steps", steps, 1, kMaxSteps);
  check_range("batch-size", batch_size, 1, kMaxBatch);
  if (!(lr > 0) || !std::isfinite(lr)) throw std::invalid_argument(fmt::format("--lr must be a positive number, got {:g}", lr));
  if (schedule != "constant" && schedule != "cosine")
    throw std::invalid_argument("--schedule must be constant or cosine, got '" + schedule + "'");
  check_range("warmup-steps", warmup_steps, 0, kMaxSteps);
  check_number("weight-decay", weight_decay, 0, 1e6, false);
  check_number("clip-grad", clip_grad, 0, 1e30, false);
  check_range("threads", threads, 0, kMaxThreads);
  check_range("shards", shards, 1, kMaxShards);
  if (!std::has_single_bit(static_cast<std::uint64_t>(shards)))
    throw std::invalid_argument(fmt::format("--shards must be a power of two (1, 2, 4, 8, ...), got {}", shards));
  check_range("eval-every", eval_every, 1, kMaxSteps);
  if (d_model % heads != 0)
    throw std::invalid_argument(fmt::format("--heads {} does not divide --d-model {}: each head gets d_model / heads dims",
                                            heads, d_model));
}

std::int64_t TrainConfig::estimated_parameters(std::int64_t vocab, std::int64_t context_size) const {
  // Per layer 12 d^2 (qkv 3 d^2, projection d^2, MLP 8 d^2); the tables (vocab + context) x d.
  return add_sat(mul_sat(layers, mul_sat(12, mul_sat(d_model, d_model))), mul_sat(add_sat(vocab, context_size), d_model));
}

std::int64_t TrainConfig::estimated_activations(std::int64_t vocab, std::int64_t context_size) const {
  // Per layer and token about 20 vectors of width d (16 of them in the MLP's 4d) and 3 attention rows per head;
  // the logits, their softmax and gradient per token.
  const std::int64_t per_token = add_sat(mul_sat(layers, add_sat(mul_sat(20, d_model), mul_sat(3 * heads, context_size))),
                                         mul_sat(3, vocab));
  return mul_sat(mul_sat(batch_size, context_size), per_token);
}

void TrainConfig::check_sizes(std::int64_t vocab, std::int64_t context_size) const {
  if (const std::int64_t p = estimated_parameters(vocab, context_size); p > kMaxParameters)
    throw std::invalid_argument(fmt::format("the model would have about {} parameters, more than the limit {}: lower "
                                            "--d-model ({}) or --layers ({})", p, kMaxParameters, d_model, layers));
  if (const std::int64_t a = estimated_activations(vocab, context_size); a > kMaxActivations)
    throw std::invalid_argument(fmt::format("one training step would hold about {} activations, more than the limit {}: "
                                            "lower --batch-size ({}), --context ({}), --d-model or --layers", a,
                                            kMaxActivations, batch_size, context_size));
}

std::string TrainConfig::to_json() const {
  const json j = {{"data", data},         {"format", format},       {"context", context},
                  {"d_model", d_model},   {"heads", heads},         {"layers", layers},
                  {"dropout", dropout},   {"steps", steps},         {"batch_size", batch_size},
                  {"lr", lr},             {"schedule", schedule},   {"warmup_steps", warmup_steps},
                  {"weight_decay", weight_decay}, {"clip_grad", clip_grad}, {"seed", seed},
                  {"threads", threads},   {"shards", shards},       {"eval_every", eval_every}};
  return j.dump();
}

TrainConfig TrainConfig::from_json(const std::string& text) {
  TrainConfig c;
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::invalid_argument("malformed config: not a JSON object");
  using cli::read_json_field;
  read_json_field(j, "data", c.data), read_json_field(j, "format", c.format), read_json_field(j, "context", c.context);
  read_json_field(j, "d_model", c.d_model), read_json_field(j, "heads", c.heads), read_json_field(j, "layers", c.layers);
  read_json_field(j, "dropout", c.dropout), read_json_field(j, "steps", c.steps);
  read_json_field(j, "batch_size", c.batch_size), read_json_field(j, "lr", c.lr);
  read_json_field(j, "schedule", c.schedule), read_json_field(j, "warmup_steps", c.warmup_steps);
  read_json_field(j, "weight_decay", c.weight_decay), read_json_field(j, "clip_grad", c.clip_grad);
  read_json_field(j, "seed", c.seed), read_json_field(j, "threads", c.threads), read_json_field(j, "shards", c.shards);
  read_json_field(j, "eval_every", c.eval_every);
  return c;
}

std::vector<std::string> TrainConfig::mismatched_for_resume(const TrainConfig& other) const {
  const json a = json::parse(to_json()), b = json::parse(other.to_json());
  // --steps may grow (train further), except under a cosine schedule, whose rate at every step depends on it.
  std::vector<std::string> free = {"threads", "eval_every", "steps"};
  if (schedule == "cosine" || other.schedule == "cosine") free.pop_back();
  std::vector<std::string> keys;
  for (const auto& [key, value] : a.items())
    if (std::find(free.begin(), free.end(), key) == free.end() && b.at(key) != value) keys.push_back(key);
  return keys;
}

}  // namespace cppgrad::gpt
