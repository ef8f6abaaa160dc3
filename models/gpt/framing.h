#pragma once
// How a cppgrad-gpt model frames the text it reads and writes, fixed by the corpus it learned (data/text_corpus.h):
//
//                    LinesFraming (--format lines)              TextFraming (--format text)
//   what it reads    <b> then the line: <b> c1 .. cn            the text as it is
//   a sample         from <b> (and the prompt) to the next <b>  a continuation, as long as asked
//   after a sample   a newline                                  a blank line
//
// framing_of is the one place that asks which (a model of lines has the boundary token <b>, id 0: only a character
// tokenizer has it); the commands visit the framing and call the overloads.
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "data/tokenizer.h"

namespace cppgrad::gpt {

struct LinesFraming {
  static constexpr std::int64_t kBoundary = 0;  // <b>
  // The ids the model reads for a prompt: a line starts after <b>.
  std::vector<std::int64_t> read(const std::vector<std::int64_t>& prompt) const {
    std::vector<std::int64_t> ids{kBoundary};
    ids.insert(ids.end(), prompt.begin(), prompt.end());
    return ids;
  }
  std::vector<std::int64_t> sample_start(const std::vector<std::int64_t>& prompt) const { return read(prompt); }
  std::optional<std::int64_t> stop_token() const { return kBoundary; }
  // New tokens a sample may take by default: the rest of the line the context holds.
  std::int64_t default_room(std::int64_t context, std::int64_t start_length) const { return context - start_length; }
  const char* after_sample() const { return "\n"; }
  const char* vocab_note() const { return " (<b> and the characters)"; }
};

struct TextFraming {
  std::int64_t empty_prompt = 0;  // what an empty prompt continues: the id of a newline, else id 0
  std::vector<std::int64_t> read(const std::vector<std::int64_t>& prompt) const { return prompt; }
  std::vector<std::int64_t> sample_start(const std::vector<std::int64_t>& prompt) const {
    return prompt.empty() ? std::vector<std::int64_t>{empty_prompt} : prompt;
  }
  std::optional<std::int64_t> stop_token() const { return std::nullopt; }
  // A continuation may run past the context: generation crops to the last block_size tokens.
  std::int64_t default_room(std::int64_t context, std::int64_t) const { return context; }
  const char* after_sample() const { return "\n\n"; }
  const char* vocab_note() const { return ""; }
};

using Framing = std::variant<LinesFraming, TextFraming>;

inline Framing framing_of(const data::Tokenizer& tok) {
  if (const data::CharTokenizer* chars = tok.chars()) {
    if (chars->has_boundary()) return LinesFraming{};
    return TextFraming{.empty_prompt = chars->find(U'\n').value_or(0)};
  }
  const std::vector<std::int64_t> newline = tok.encode("\n");  // GPT-2: 198
  return TextFraming{.empty_prompt = newline.size() == 1 ? newline[0] : 0};
}

}  // namespace cppgrad::gpt
