#include "data/token_ids_text.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <stdexcept>

#include "core/message_text.h"

namespace cppgrad::data {

std::string ids_text(std::span<const std::int64_t> ids) {
  std::string out(ids.size() * 21 + 1, '\0');  // 20 characters hold any int64, then a separator
  char* p = out.data();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) *p++ = ' ';
    p = std::to_chars(p, out.data() + out.size(), ids[i]).ptr;
  }
  *p++ = '\n';
  out.resize(static_cast<std::size_t>(p - out.data()));
  return out;
}

std::vector<std::int64_t> parse_ids(std::string_view text, std::int64_t vocab_size, const std::string& source) {
  std::vector<std::int64_t> ids;
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < text.size();) {
    if (space(text[i])) { ++i; continue; }
    std::size_t end = i;
    while (end < text.size() && !space(text[end])) ++end;
    const std::string_view word = text.substr(i, end - i);
    std::int64_t id = -1;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (ec != std::errc() || ptr != word.data() + word.size() || id < 0 || id >= vocab_size)
      throw std::invalid_argument(fmt::format("{}: id {} is {}, not a token id of this tokenizer (0..{})", source,
                                              ids.size() + 1, quoted_text(word, 40), vocab_size - 1));
    ids.push_back(id);
    i = end;
  }
  return ids;
}

}  // namespace cppgrad::data
