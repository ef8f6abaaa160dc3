#include "models/gpt/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/json_bounded.h"
#include "train/run_config.h"

namespace cppgrad::gpt {

namespace {

const char* const kFormatV1 = "cppgrad-gpt-checkpoint-v1";
const train::CheckpointFormat kFormat{.program = "cppgrad-gpt", .format = "cppgrad-gpt-checkpoint-v2",
                                      .upgrades_from = {kFormatV1}};

nlohmann::json progress_json(const IntervalProgress& p) {
  return {{"batch_rng", std::vector<std::uint64_t>(p.batch_rng.begin(), p.batch_rng.end())},
          {"loss_sum", p.loss_sum}, {"steps_since_eval", p.steps_since_eval}, {"train_s", p.train_s},
          {"interval_s", p.interval_s}};
}

IntervalProgress parse_progress(const std::string& text, std::int64_t eval_every) {
  // An object of 5 keys, one of them 4 words (progress_json): 10 values, depth 2; room for as many again.
  const nlohmann::json j = parse_json_bounded(text, {.max_depth = 2, .max_values = 20}, "metadata 'epoch_progress'");
  if (!j.is_object()) throw std::invalid_argument("metadata 'epoch_progress' is not a JSON object");
  auto number = [&](const char* key) {
    if (!j.contains(key) || !j.at(key).is_number() || !std::isfinite(j.at(key).get<double>()) || j.at(key).get<double>() < 0)
      throw std::invalid_argument(std::string("epoch_progress: '") + key + "' must be a finite number >= 0");
    return j.at(key).get<double>();
  };
  IntervalProgress p;
  const nlohmann::json& rng = j.contains("batch_rng") ? j.at("batch_rng") : nlohmann::json();
  if (!rng.is_array() || rng.size() != 4 || !std::all_of(rng.begin(), rng.end(), [](const auto& w) { return w.is_number_unsigned(); }))
    throw std::invalid_argument("epoch_progress: 'batch_rng' must be 4 unsigned 64-bit words");
  for (std::size_t i = 0; i < 4; ++i) p.batch_rng[i] = rng[i].get<std::uint64_t>();
  if (p.batch_rng == Generator::State{}) throw std::invalid_argument("epoch_progress: 'batch_rng' is all zeros");
  p.loss_sum = number("loss_sum"), p.train_s = number("train_s"), p.interval_s = number("interval_s");
  if (!j.contains("steps_since_eval") || !j.at("steps_since_eval").is_number_unsigned() ||
      j.at("steps_since_eval").get<std::uint64_t>() >= static_cast<std::uint64_t>(eval_every))
    throw std::invalid_argument(fmt::format("epoch_progress: 'steps_since_eval' must be a whole number below {}", eval_every));
  p.steps_since_eval = j.at("steps_since_eval").get<std::int64_t>();
  return p;
}

// The metadata that rebuilds the tokenizer (the table in checkpoint.h).
std::map<std::string, std::string> tokenizer_metadata(const data::TokenizerName& name, const data::Tokenizer& tokenizer) {
  switch (name.kind) {
    case data::TokenizerName::Kind::chars: return {{"vocab", tokenizer.chars()->vocab_json()}};
    case data::TokenizerName::Kind::bpe_file: return {{"tokenizer_model", tokenizer.bpe()->to_model_text()}};
    case data::TokenizerName::Kind::gpt2: return {};
  }
  return {};
}

// The tokenizer the metadata holds, as the config names it; the text is hostile input (bounded, checked whole).
data::Tokenizer read_tokenizer(const data::TokenizerName& name, const std::map<std::string, std::string>& metadata) {
  const auto text = [&](const char* key) -> const std::string& {
    if (!metadata.count(key)) throw std::invalid_argument(fmt::format("metadata has no '{}'", key));
    return metadata.at(key);
  };
  switch (name.kind) {
    case data::TokenizerName::Kind::chars: return data::CharTokenizer::from_vocab_json(text("vocab"));
    case data::TokenizerName::Kind::bpe_file:
      return data::Tokenizer(data::bpe_from_model_text(text("tokenizer_model"), "metadata 'tokenizer_model'"));
    case data::TokenizerName::Kind::gpt2: return data::Tokenizer(data::BpeTokenizer::gpt2());
  }
  throw std::logic_error("read_tokenizer: a tokenizer kind without a reader");
}

// A v1 file's metadata as v2 writes it (v2 keeps the model's config apart, as "model"): v1's "config" held the model's
// sizes under their flags' spellings ("d_model", "heads", "layers", "dropout"), which the table reads as every row's;
// v1's "context" is the model's block_size and its tokenizer's size the vocab_size (model_config made them so).
void upgrade_from_v1(std::map<std::string, std::string>& metadata) {
  if (!metadata.count("config")) throw std::invalid_argument("metadata has no 'config'");
  const TrainConfig c = train::run_config_from_json(config_table(), metadata.at("config"),
                                                    ConfigTable<TrainConfig>::Keys::every_row);
  const std::int64_t context = train::metadata_count(metadata, "context");
  metadata["model"] = c.model_config(read_tokenizer(c.tokenizer, metadata).size(), context).to_json();
  metadata["config"] = c.to_json();
  metadata.erase("context");
  metadata["format"] = kFormat.format;
}

// A LoRA checkpoint's base read (whole and checked, as any checkpoint), held to the hash the adapters were trained
// on, and its weights put beside the adapters in c.state.model; without read_base, its metadata parsed alone.
void add_lora_base(const std::string& path, const std::map<std::string, std::string>& metadata, GptCheckpoint& c,
                   bool read_base) {
  try {
    if (!metadata.count("lora_base")) throw std::invalid_argument("metadata has no 'lora_base' (its LoRA's base)");
    c.lora_base = LoRABase::from_json(metadata.at("lora_base"));
    for (const auto& [name, t] : c.state.model)
      if (name.find(".lora.") == std::string::npos)
        throw std::invalid_argument("a LoRA checkpoint holds its adapters alone, and this one holds '" + name + "'");
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  if (!read_base) return;
  const std::string& base_path = c.lora_base->path;
  const auto refuse = [&](const std::string& why) {
    throw std::runtime_error(fmt::format("checkpoint {}: its base {} {}", path, base_path, why));
  };
  // A base that names a base of its own is refused from its header, before it is read: no chain, and no loop.
  bool base_is_lora = false;
  try {
    base_is_lora = SafetensorsReader(base_path).header().metadata.count("lora_base") > 0;
  } catch (const std::runtime_error&) {
    // unreadable: the reader below says why, in its words
  }
  if (base_is_lora) refuse("is a LoRA checkpoint itself");
  GptCheckpoint base;
  try {
    base = read_gpt_checkpoint(base_path, train::CheckpointTensors::without_optimizer);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("checkpoint {}: its base {} (the --init it finetunes) cannot be read: {}",
                                         path, base_path, e.what()));
  }
  const std::string hash = weights_hash(base.state.model);
  if (hash != c.lora_base->weights)
    refuse(fmt::format("holds other weights than the ones its adapters were trained on ({}, not {}): put the file it "
                       "was finetuned from back at that path", hash, c.lora_base->weights));
  check_finetune_of(base.model, c.model, "checkpoint " + path + ": its base " + base_path);
  if (!(base.tokenizer == c.tokenizer)) refuse("has another tokenizer than the adapters' run");
  for (auto& [name, t] : finetune_weights(std::move(base.state.model), c.model.block_size))
    c.state.model.emplace(name, std::move(t));
}

}  // namespace

void check_finetune_of(const nn::GPTConfig& have, const nn::GPTConfig& want, const std::string& label) {
  for (const auto& row : nn::gpt_config_table().rows()) {
    if (row.role == FieldRole::training || row.name == "block_size") continue;
    if (row.get(have) != row.get(want))
      throw std::runtime_error(fmt::format("{}: its model has {} {}, this run's {}", label, row.name,
                                           config_text(row.get(have)), config_text(row.get(want))));
  }
  if (have.block_size < want.block_size)
    throw std::runtime_error(fmt::format("{}: its model reads a context of {}, this run's {}", label, have.block_size,
                                         want.block_size));
}

nn::StateDict finetune_weights(nn::StateDict state, std::int64_t block_size) {
  for (auto& [name, tensor] : state)
    if (name.ends_with("wpe.weight") && tensor.dim() == 2 && tensor.shape()[0] > block_size)
      tensor = tensor.narrow(0, 0, block_size).contiguous();
  return state;
}

void save_gpt_checkpoint(const std::string& path, const nn::GPT& model, const optim::Optimizer& optimizer,
                         const TrainConfig& config, const data::Tokenizer& tokenizer, std::int64_t step,
                         const std::vector<Evaluation>& history, const IntervalProgress& progress,
                         const std::optional<LoRABase>& lora_base) {
  std::map<std::string, std::string> extra = tokenizer_metadata(config.tokenizer, tokenizer);
  extra.emplace("model", model.config().to_json());
  if (lora_base) extra.emplace("lora_base", lora_base->to_json());
  const train::CheckpointMeta meta{.config = config.to_json(),
                                   .epoch = 0,
                                   .global_step = step,
                                   .generators = {{"dropout_rng", model.dropout_generator().state()}},
                                   .history = history_json(history),
                                   .epoch_progress = progress_json(progress).dump(),
                                   .extra = std::move(extra)};
  if (!lora_base) return train::save_checkpoint(path, kFormat, model, optimizer, meta);
  nn::StateDict adapters;  // the trainable parameters: the frozen base stays in its own file
  for (const auto& [name, p] : model.named_trainable_parameters()) adapters.emplace(name, p.detach());
  train::save_checkpoint(path, kFormat, adapters, optimizer, meta);
}

GptCheckpoint read_gpt_checkpoint(const std::string& path, train::CheckpointTensors which) {
  SafetensorsFile f = train::read_checkpoint(path, kFormat, which);
  GptCheckpoint c;
  try {
    if (f.metadata.at("format") == kFormatV1) upgrade_from_v1(f.metadata);
    if (!f.metadata.count("model")) throw std::invalid_argument("metadata has no 'model'");
    c.model = nn::GPTConfig::from_json(f.metadata.at("model"));  // bounded before anything is allocated for it
    c.config = TrainConfig::from_json(train::checkpoint_config(f, path));
    c.config.model = c.model;
    c.config.validate();
    c.tokenizer = read_tokenizer(c.config.tokenizer, f.metadata);
    if (c.model.vocab_size != c.tokenizer.size())
      throw std::invalid_argument(fmt::format("its model's vocab_size {} is not its tokenizer's {} tokens",
                                              c.model.vocab_size, c.tokenizer.size()));
    c.config.check_parameters(c.tokenizer.size(), c.model.block_size);  // a run resumed from it checks its batch too
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  // The weights the config describes against those the file holds, before anything is built from the config (a LoRA
  // run's: its base's file is held to its config, and the adapters to the model when loaded).
  const bool tensors = which != train::CheckpointTensors::none;
  if (c.config.lora.rank == 0) {
    if (tensors) train::check_model_size(f, path, nn::state_dict_numel(c.model));
    else train::check_model_size(path, nn::state_dict_numel(c.model));  // from the header: no tensor was read
  }
  c.state = train::checkpoint_state(f, path, {"dropout_rng"});
  if (c.config.lora.rank > 0) add_lora_base(path, f.metadata, c, /*read_base=*/tensors);
  try {
    c.step = c.state.meta.global_step;
    c.history = parse_history(c.state.meta.history, c.step);
    if (!c.history.empty() && c.history.back().step > c.step)
      throw std::invalid_argument("its history goes past its global_step");
    if (c.state.meta.epoch_progress.empty()) throw std::invalid_argument("metadata has no 'epoch_progress'");
    c.progress = parse_progress(c.state.meta.epoch_progress, c.config.eval_every);
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  return c;
}

LoadedModel load_model(const std::string& path) {
  GptCheckpoint c = read_gpt_checkpoint(path, train::CheckpointTensors::without_optimizer);
  LoadedModel m{.config = c.config, .tokenizer = c.tokenizer, .context = c.model.block_size, .steps_done = c.step,
                .model = {}};
  m.model = make_gpt_to_load(c.model, c.config);
  try {
    m.model->assign_state_dict(c.state.model);  // the weights as read: no second copy
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  m.model->eval();
  return m;
}

}  // namespace cppgrad::gpt
