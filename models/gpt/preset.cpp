#include "models/gpt/preset.h"

#include <fmt/format.h>

#include <stdexcept>

#include "nn/gpt_hf.h"

namespace cppgrad::gpt {

namespace {

// Parameters with GPT-2's tables (vocabulary 50257, context 1024), as Hugging Face's model cards round them.
std::int64_t preset_parameters(const nn::GPTConfig& m) {
  const std::int64_t C = m.n_embd;
  return m.n_layer * (12 * C * C + 13 * C) + (m.vocab_size + m.block_size) * C + 2 * C;
}

}  // namespace

TrainConfig preset_config(std::string_view name) {
  nn::GPTConfig m;
  try {
    m = nn::gpt2_preset(name);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(fmt::format("--preset '{}': must be one of {}", name, presets_help()));
  }
  TrainConfig c;
  c.model = m;
  c.context = m.block_size;
  c.tokenizer = data::TokenizerName::parse("gpt2");
  c.format = data::TextFormat::text;
  return c;
}

std::string presets_help() {
  std::string s;
  for (const std::string_view name : nn::gpt2_preset_names()) {
    const nn::GPTConfig m = nn::gpt2_preset(name);
    s += fmt::format("{}{} ({}M: {} layers, {} heads, {} wide)", s.empty() ? "" : ", ", name,
                     (preset_parameters(m) + 500'000) / 1'000'000, m.n_layer, m.n_head, m.n_embd);
  }
  return s;
}

std::vector<std::string> shape_flags() {
  std::vector<std::string> flags;
  for (const auto& row : nn::gpt_config_table().rows())
    if (!row.flag.empty() && row.role != FieldRole::training) flags.push_back(row.flag);
  for (const char* flag : {"context", "tokenizer", "format"}) flags.push_back(flag);
  return flags;
}

void pin_shape(TrainConfig& c, const TrainConfig& shape, const std::set<std::string>& given, const std::string& source) {
  const auto& table = config_table();
  for (const std::string& flag : shape_flags()) {
    if (flag == "context" && given.count(flag)) {  // a shorter window crops the position table; a longer has none
      if (c.context > shape.context)
        throw std::invalid_argument(fmt::format("--context {} is longer than {}'s {}: its position table has {} rows "
                                                "(a shorter --context crops it, as nanoGPT's crop_block_size does)",
                                                c.context, source, shape.context, shape.context));
      continue;
    }
    const auto& row = table.row(flag);
    const ConfigValue want = row.get(shape);
    if (given.count(flag) && row.get(c) != want)
      throw std::invalid_argument(fmt::format("--{} {} disagrees with {}, which sets --{} {} (give one or the other)",
                                              flag, config_text(row.get(c)), source, flag,
                                              config_text(want)));
    row.set(c, want);
  }
}

}  // namespace cppgrad::gpt
