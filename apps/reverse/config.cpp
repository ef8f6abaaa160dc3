#include "reverse/config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

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

void TrainConfig::validate() const {
  auto positive = [](const char* name, std::int64_t v) {
    if (v <= 0) throw std::invalid_argument(fmt::format("--{} must be positive, got {}", name, v));
  };
  positive("epochs", epochs);
  positive("batch-size", batch_size);
  positive("d-model", d_model);
  positive("heads", heads);
  positive("d-ff", d_ff);
  positive("positions", positions);
  if (encoder_layers < 0 || decoder_layers < 1)
    throw std::invalid_argument(fmt::format("--encoder-layers must be >= 0 and --decoder-layers >= 1, got {} and {}",
                                            encoder_layers, decoder_layers));
  if (d_model % heads != 0)
    throw std::invalid_argument(fmt::format("--heads {} does not divide --d-model {}: each head gets d_model / heads dims",
                                            heads, d_model));
  if (!(lr > 0)) throw std::invalid_argument(fmt::format("--lr must be positive, got {}", lr));
  if (!(dropout >= 0 && dropout < 1)) throw std::invalid_argument(fmt::format("--dropout must be in [0, 1), got {}", dropout));
  if (clip_grad < 0) throw std::invalid_argument(fmt::format("--clip-grad must be >= 0, got {}", clip_grad));
  if (threads < 0) throw std::invalid_argument(fmt::format("--threads must be >= 0, got {}", threads));
  if (optimizer != "adam" && optimizer != "adamw" && optimizer != "sgd")
    throw std::invalid_argument("--optimizer must be adam, adamw or sgd, got '" + optimizer + "'");
  if (schedule != "constant" && schedule != "step" && schedule != "cosine")
    throw std::invalid_argument("--schedule must be constant, step or cosine, got '" + schedule + "'");
  if (arch != "transformer" && arch != "tutorial")
    throw std::invalid_argument("--arch must be transformer or tutorial, got '" + arch + "'");
  nn::parse_cross_attention(attention);
  if ((min_len > 0) != (max_len > 0))
    throw std::invalid_argument("--min-len and --max-len go together (variable lengths), or neither (--seq-len)");
  if (seq_len <= 0) throw std::invalid_argument(fmt::format("--seq-len must be positive, got {}", seq_len));
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
            {"seed", seed},         {"threads", threads}};
  return j.dump();
}

TrainConfig TrainConfig::from_json(const std::string& text) {
  TrainConfig c;
  try {
    const json j = json::parse(text);
    auto get = [&](const char* key, auto& field) {
      if (!j.contains(key)) throw std::invalid_argument(std::string("config lacks '") + key + "'");
      j.at(key).get_to(field);
    };
    get("vocab", c.vocab), get("seq_len", c.seq_len), get("min_len", c.min_len), get("max_len", c.max_len);
    get("train_size", c.train_size), get("test_size", c.test_size), get("d_model", c.d_model), get("heads", c.heads);
    get("encoder_layers", c.encoder_layers), get("decoder_layers", c.decoder_layers), get("d_ff", c.d_ff);
    get("positions", c.positions), get("dropout", c.dropout), get("attention", c.attention), get("arch", c.arch);
    get("epochs", c.epochs), get("batch_size", c.batch_size), get("lr", c.lr), get("optimizer", c.optimizer);
    get("weight_decay", c.weight_decay), get("momentum", c.momentum), get("schedule", c.schedule);
    get("warmup_steps", c.warmup_steps), get("clip_grad", c.clip_grad), get("seed", c.seed), get("threads", c.threads);
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
