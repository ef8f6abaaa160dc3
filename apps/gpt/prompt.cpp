#include "gpt/prompt.h"

#include <fmt/format.h>

#include <stdexcept>

#include "data/utf8.h"

namespace cppgrad::gpt {

std::vector<std::int64_t> prompt_tokens(const data::Tokenizer& tokenizer, const std::string& text,
                                        const std::string& what) {
  if (!tokenizer.chars()) return tokenizer.encode(text);
  const data::CharTokenizer& tok = *tokenizer.chars();
  std::u32string chars;
  try {
    chars = data::decode_utf8(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(what + ": " + e.what());
  }
  for (const char32_t c : chars)
    if (!tok.find(c))
      throw std::invalid_argument(fmt::format("{} '{}': the character '{}' ({}) is not in this model's vocabulary",
                                              what, text, data::encode_utf8(c), data::code_point_name(c)));
  return tok.encode(chars);
}

}  // namespace cppgrad::gpt
