#include "models/gpt/prompt.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/message_text.h"
#include "data/utf8.h"
#include "models/gpt/framing.h"

namespace cppgrad::gpt {

namespace {

// A prompt as a message quotes it: on one line, its control characters escaped, and its start only when it is long
// (a 100 KB prompt is not echoed whole).
std::string shown(const std::string& text) { return quoted_text(text, 200); }

}  // namespace

std::vector<std::int64_t> prompt_tokens(const data::Tokenizer& tokenizer, const std::string& text,
                                        const std::string& what) {
  if (!tokenizer.chars()) {
    try {
      return tokenizer.encode(text);
    } catch (const std::runtime_error& e) {  // a stored BPE's split pattern gave up on the text
      throw std::invalid_argument(fmt::format("{} {}: {}", what, shown(text), e.what()));
    }
  }
  const data::CharTokenizer& tok = *tokenizer.chars();
  std::u32string chars;
  try {
    chars = data::decode_utf8(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(what + ": " + e.what());
  }
  for (const char32_t c : chars)
    if (!tok.find(c))
      throw std::invalid_argument(fmt::format("{} {}: the character '{}' ({}) is not in this model's vocabulary",
                                              what, shown(text), escape_controls(data::encode_utf8(c)),
                                              data::code_point_name(c)));
  return tok.encode(chars);
}

std::vector<std::int64_t> ids_to_read(const data::Tokenizer& tokenizer, const std::string& text, std::int64_t context,
                                      const std::string& what) {
  const std::vector<std::int64_t> ids = std::visit(
      [&](const auto& framing) { return framing.read(prompt_tokens(tokenizer, text, what)); }, framing_of(tokenizer));
  if (ids.empty()) throw std::invalid_argument(what + " is empty");
  if (std::ssize(ids) > context)
    throw std::invalid_argument(
        fmt::format("{} {} has {} tokens; the model reads at most {}", what, shown(text), ids.size(), context));
  return ids;
}

std::vector<std::int64_t> sample_start(const data::Tokenizer& tokenizer, const std::string& text, std::int64_t context,
                                       const std::string& what) {
  const std::vector<std::int64_t> prompt =
      text.empty() ? std::vector<std::int64_t>{} : prompt_tokens(tokenizer, text, what);
  const Framing framing = framing_of(tokenizer);
  const std::vector<std::int64_t> start = std::visit([&](const auto& f) { return f.sample_start(prompt); }, framing);
  // A line's <b> and prompt must leave room for at least one more character before the context is full.
  if (std::holds_alternative<LinesFraming>(framing) && std::ssize(start) >= context)
    throw std::invalid_argument(fmt::format("{} has {} characters; this model's lines hold at most {}", what,
                                            prompt.size(), context - 1));
  return start;
}

}  // namespace cppgrad::gpt
