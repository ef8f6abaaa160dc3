#include "models/gpt/lora_base.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/json_bounded.h"
#include "core/safetensors.h"
#include "nn/init.h"
#include "nn/lora.h"

namespace cppgrad::gpt {

namespace {

constexpr const char* kHashPrefix = "fnv1a64:";

void fnv1a(std::uint64_t& h, const void* data, std::size_t bytes) {
  constexpr std::uint64_t kPrime = 1099511628211ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {  // a word at a time: FNV-1a's step with 64-bit "bytes"
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    h = (h ^ word) * kPrime;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * kPrime;
}

}  // namespace

std::string weights_hash(const nn::StateDict& state) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const auto& [name, t] : state) {  // a std::map: name order
    fnv1a(h, name.data(), name.size() + 1);  // with its terminating zero, so "ab" + "c" is not "a" + "bc"
    fnv1a(h, t.shape().data(), t.shape().size() * sizeof(std::int64_t));
    const Tensor values = t.to(DType::Float32).contiguous();
    fnv1a(h, values.data<float>(), static_cast<std::size_t>(values.numel()) * sizeof(float));
  }
  return fmt::format("{}{:016x}", kHashPrefix, h);
}

std::string LoRABase::to_json() const { return nlohmann::json{{"path", path}, {"weights", weights}}.dump(); }

LoRABase LoRABase::from_json(const std::string& json) {
  const nlohmann::json j = parse_json_bounded(json, {.max_depth = 1, .max_values = 4}, "metadata 'lora_base'");
  const auto text = [&](const char* key) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_string() || j.at(key).get<std::string>().empty())
      throw std::invalid_argument(fmt::format("metadata 'lora_base' has no '{}'", key));
    return j.at(key).get<std::string>();
  };
  LoRABase base{.path = text("path"), .weights = text("weights")};
  if (!base.weights.starts_with(kHashPrefix) || base.weights.size() != std::strlen(kHashPrefix) + 16)
    throw std::invalid_argument("metadata 'lora_base': 'weights' is not " + std::string(kHashPrefix) + "<16 hex digits>");
  return base;
}

std::optional<std::string> lora_base_path(const std::string& checkpoint) {
  try {
    const SafetensorsReader file(checkpoint);
    const std::map<std::string, std::string>& metadata = file.header().metadata;
    if (const auto base = metadata.find("lora_base"); base != metadata.end())
      return LoRABase::from_json(base->second).path;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::runtime_error lora_checkpoint_as_init(const std::string& path, const LoRABase& base) {
  return std::runtime_error(fmt::format("--init {}: a LoRA checkpoint (adapters on {}); finetune its merged model: "
                                        "cppgrad-gpt merge --checkpoint {} --out MERGED, then --init MERGED",
                                        path, base.path, path));
}

std::unique_ptr<nn::GPT> make_gpt(const nn::GPTConfig& model, const TrainConfig& config, Generator& init) {
  auto gpt = std::make_unique<nn::GPT>(model, init);
  if (config.lora.rank == 0) return gpt;
  // Drawn even where the base's values are to be loaded (a caller's SkipInit): under train --init they are the
  // finetune's start. Elsewhere a load replaces them, and they are a few thousand values.
  const nn::init::SkipInit draw_adapters(false);
  try {
    nn::add_lora(*gpt, config.lora_target_names(), config.lora, init, gpt->shared_dropout_generator());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--lora-targets {}: {}", config.lora_targets, e.what()));
  }
  return gpt;
}

std::unique_ptr<nn::GPT> make_gpt_to_load(const nn::GPTConfig& model, const TrainConfig& config) {
  Generator init(0);
  const nn::init::SkipInit skip;
  return make_gpt(model, config, init);
}

}  // namespace cppgrad::gpt
