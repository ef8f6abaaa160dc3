#include "train/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/json_bounded.h"
#include "core/message_text.h"
#include "train/flags.h"

namespace cppgrad::train {

namespace {

// Saving refuses weights that are not all finite: the last good checkpoint is kept. parameters: the weights to check,
// each once (a tied weight under its owner's name).
void check_finite(const std::string& path, const nn::NamedTensors& parameters) {
  for (const auto& [name, p] : parameters)
    if (!p.all_finite())
      throw std::runtime_error("not saving " + path + ": parameter " + name + " holds NaN or Inf values (the last "
                               "good checkpoint, if any, is kept)");
}

void write_checkpoint(const std::string& path, const CheckpointFormat& format, const nn::StateDict& model,
                      const optim::Optimizer& optimizer, const CheckpointMeta& meta) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, t] : model) tensors["model." + name] = t;
  for (const auto& [name, t] : optimizer.state_dict()) tensors["optim." + name] = t;
  std::map<std::string, std::string> metadata = {{"format", format.format},
                                                 {"config", meta.config},
                                                 {"epoch", std::to_string(meta.epoch)},
                                                 {"global_step", std::to_string(meta.global_step)},
                                                 {"history", meta.history}};
  if (!meta.epoch_progress.empty()) metadata["epoch_progress"] = meta.epoch_progress;
  for (const auto& [key, state] : meta.generators)
    metadata[key] = nlohmann::json(std::vector<std::uint64_t>(state.begin(), state.end())).dump();
  for (const auto& [key, value] : meta.extra)
    if (!metadata.emplace(key, value).second)
      throw std::invalid_argument("save_checkpoint: metadata key '" + key + "' is the checkpoint's own");
  write_safetensors(path, tensors, metadata);
}

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointFormat& format, const nn::Module& model,
                     const optim::Optimizer& optimizer, const CheckpointMeta& meta) {
  check_finite(path, model.named_parameters());
  write_checkpoint(path, format, model.state_dict(), optimizer, meta);
}

void save_checkpoint(const std::string& path, const CheckpointFormat& format, const nn::StateDict& model,
                     const optim::Optimizer& optimizer, const CheckpointMeta& meta) {
  check_finite(path, nn::NamedTensors(model.begin(), model.end()));
  write_checkpoint(path, format, model, optimizer, meta);
}

SafetensorsFile read_checkpoint(const std::string& path, const CheckpointFormat& format, CheckpointTensors which) {
  SafetensorsReader reader(path);  // the header read and checked whole: every entry's name, shape and bytes
  const auto& metadata = reader.header().metadata;
  const auto found = metadata.find("format");
  const auto& earlier = format.upgrades_from;
  if (found == metadata.end() ||
      (found->second != format.format && std::find(earlier.begin(), earlier.end(), found->second) == earlier.end()))
    throw std::runtime_error("checkpoint " + path + ": not a " + format.program + " checkpoint (metadata 'format' is "
                             "missing or not " + format.format + ")");
  if (which == CheckpointTensors::all) return std::move(reader).read_all();
  SafetensorsFile f;
  if (which == CheckpointTensors::without_optimizer)
    for (const SafetensorsEntry& e : reader.header().entries)
      if (e.name.rfind("optim.", 0) != 0) f.tensors.emplace(e.name, reader.read(e));
  f.metadata = metadata;
  return f;
}

const std::string& checkpoint_config(const SafetensorsFile& file, const std::string& path) {
  const auto config = file.metadata.find("config");
  if (config == file.metadata.end()) throw std::runtime_error("checkpoint " + path + ": metadata has no 'config'");
  return config->second;
}

std::int64_t metadata_count(const std::map<std::string, std::string>& metadata, const std::string& key) {
  if (!metadata.count(key)) throw std::invalid_argument("metadata has no '" + key + "'");
  const auto v = parse_int(metadata.at(key));
  if (!v || *v < 0) {
    // Shown short and escaped: a hostile file's value may be megabytes long.
    throw std::invalid_argument("metadata '" + key + "' must be a whole number >= 0, got " +
                                quoted_text(metadata.at(key), 40));
  }
  return *v;
}

namespace {

// A generator's state stored under `key`: 4 unsigned 64-bit words, not all zero.
Generator::State generator_state(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const nlohmann::json words =
      parse_json_bounded(metadata.at(key), {.max_depth = 1, .max_values = 5}, "metadata '" + key + "'");
  if (!words.is_array() || words.size() != 4 ||
      !std::all_of(words.begin(), words.end(), [](const nlohmann::json& w) { return w.is_number_unsigned(); }))
    throw std::invalid_argument("metadata '" + key + "' must be an array of 4 unsigned 64-bit words");
  const auto w = words.get<std::vector<std::uint64_t>>();
  if (std::all_of(w.begin(), w.end(), [](std::uint64_t x) { return x == 0; }))
    throw std::invalid_argument("metadata '" + key + "' is all zeros, a state xoshiro256** never leaves");
  return {w[0], w[1], w[2], w[3]};
}

}  // namespace

namespace {

void check_held(std::int64_t held, const std::string& path, std::int64_t expected) {
  if (held != expected)
    throw std::runtime_error(fmt::format("checkpoint {}: its config makes a model of {} values, but its model tensors "
                                         "hold {}: the config does not describe these weights", path, expected, held));
}

}  // namespace

void check_model_size(const SafetensorsFile& file, const std::string& path, std::int64_t expected) {
  std::int64_t held = 0;
  for (const auto& [name, t] : file.tensors)
    if (name.rfind("model.", 0) == 0) held += t.numel();
  check_held(held, path, expected);
}

void check_model_size(const std::string& path, std::int64_t expected) {
  const SafetensorsReader reader(path);  // named: a temporary's header would be gone before the loop reads it
  std::int64_t held = 0;
  for (const SafetensorsEntry& e : reader.header().entries)
    if (e.name.rfind("model.", 0) == 0) held += numel_of(e.shape);
  check_held(held, path, expected);
}

CheckpointState checkpoint_state(const SafetensorsFile& file, const std::string& path,
                                 const std::vector<std::string>& generators) {
  CheckpointState s;
  for (const auto& [name, t] : file.tensors) {
    if (name.rfind("model.", 0) == 0) s.model[name.substr(6)] = t;
    else if (name.rfind("optim.", 0) == 0) s.optimizer[name.substr(6)] = t;
    else throw std::runtime_error("checkpoint " + path + ": unexpected tensor " + quoted_text(name));
    // save_checkpoint never writes one: such a file was damaged or made by hand, and would only give NaN losses
    if (!t.all_finite())
      throw std::runtime_error("checkpoint " + path + ": tensor '" + name + "' holds NaN or Inf values (training "
                               "never saves such weights: the file was damaged or made elsewhere)");
  }
  try {
    const auto& meta = file.metadata;
    std::vector<std::string> required = {"epoch", "global_step"};
    required.insert(required.end(), generators.begin(), generators.end());
    required.push_back("history");
    for (const std::string& key : required)
      if (!meta.count(key)) throw std::invalid_argument("metadata has no '" + key + "'");
    for (const std::string& key : generators) s.meta.generators[key] = generator_state(meta, key);
    s.meta.config = meta.count("config") ? meta.at("config") : "";
    s.meta.history = meta.at("history");
    if (meta.count("epoch_progress")) s.meta.epoch_progress = meta.at("epoch_progress");
    s.meta.epoch = metadata_count(meta, "epoch");
    s.meta.global_step = metadata_count(meta, "global_step");
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  return s;
}

namespace {

// The weights are checked, the optimizer's load is all-or-nothing, and only then is the model overwritten (which
// can no longer fail).
void restore(const CheckpointState& state, const std::string& path, const nn::Module& model,
             const std::function<void()>& load_optimizer, const std::function<void()>& load_weights) {
  try {
    model.check_state_dict(state.model);
    load_optimizer();
    load_weights();
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
}

}  // namespace

void restore_checkpoint(const CheckpointState& state, const std::string& path, nn::Module& model,
                        optim::Optimizer& optimizer) {
  restore(state, path, model, [&] { optimizer.load_state_dict(state.optimizer); },
          [&] { model.load_state_dict(state.model); });
}

void restore_checkpoint_assigning(const CheckpointState& state, const std::string& path, const nn::Module& model,
                                  optim::Optimizer& optimizer,
                                  const std::function<void(const nn::StateDict&)>& assign_weights) {
  restore(state, path, model, [&] { optimizer.assign_state_dict(state.optimizer); },
          [&] { assign_weights(state.model); });
}

}  // namespace cppgrad::train
