#include "models/gpt/hf_config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/json_bounded.h"
#include "data/utf8.h"

namespace cppgrad::gpt {

namespace {
constexpr std::uint64_t kMaxConfigJsonBytes = 1 << 20;  // GPT-2's is 665 bytes
constexpr std::size_t kMaxConfigJsonValues = 1 << 16;
}  // namespace

HFConfig read_hf_config(const std::string& path) {
  const std::string text = data::read_text_file(path, kMaxConfigJsonBytes);
  nlohmann::json j;
  try {
    // GPT-2's nests 3 deep (task_specific_params) and holds 40 values; a model's config.json has tens to hundreds.
    j = parse_json_bounded(text, {.max_depth = 16, .max_values = kMaxConfigJsonValues}, path);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  if (!j.is_object()) throw std::runtime_error(path + ": is not a JSON object (a Hugging Face config.json)");
  const auto size = [&](const char* key, const char* older = nullptr) {
    const char* k = !j.contains(key) && older && j.contains(older) ? older : key;
    if (!j.contains(k)) throw std::runtime_error(fmt::format("{}: has no '{}'", path, key));
    const nlohmann::json& v = j.at(k);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > (1u << 24))
      throw std::runtime_error(fmt::format("{}: '{}' must be a whole number in 1..{}, got {}", path, k, 1u << 24,
                                           json_value_text(v)));
    return v.get<std::int64_t>();
  };
  return {.n_head = size("n_head"), .n_layer = size("n_layer"), .n_embd = size("n_embd"),
          .n_positions = size("n_positions", "n_ctx"), .vocab_size = size("vocab_size")};
}

std::string hf_config_json(const nn::GPTConfig& m) {
  nlohmann::ordered_json j = {
      {"architectures", {"GPT2LMHeadModel"}}, {"model_type", "gpt2"}, {"vocab_size", m.vocab_size},
      {"n_positions", m.block_size}, {"n_ctx", m.block_size}, {"n_embd", m.n_embd}, {"n_layer", m.n_layer},
      {"n_head", m.n_head}, {"n_inner", nullptr}, {"activation_function", "gelu_new"},
      // GPT-2's dropout for further training in transformers; sampling and evaluation turn it off
      {"resid_pdrop", 0.1}, {"embd_pdrop", 0.1}, {"attn_pdrop", 0.1},
      {"layer_norm_epsilon", 1e-5}, {"initializer_range", 0.02}, {"scale_attn_weights", true},
      {"tie_word_embeddings", true}, {"use_cache", true}};
  if (m.vocab_size == kGpt2Vocab) j["bos_token_id"] = 50256, j["eos_token_id"] = 50256;  // <|endoftext|>
  return j.dump(2) + "\n";
}

}  // namespace cppgrad::gpt
