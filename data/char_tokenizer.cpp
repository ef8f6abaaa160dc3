#include "data/char_tokenizer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

#include "core/json_error_text.h"
#include "data/utf8.h"

namespace cppgrad::data {

CharTokenizer::CharTokenizer(std::vector<char32_t> chars, bool boundary) : chars_(std::move(chars)), boundary_(boundary) {
  vocab_.reserve(chars_.size() + (boundary_ ? 1 : 0));
  if (boundary_) vocab_.emplace_back();
  for (const char32_t c : chars_) vocab_.push_back(encode_utf8(c));  // throws for a non-scalar value
}

CharTokenizer CharTokenizer::from_text(std::u32string_view text, bool with_boundary) {
  std::vector<char32_t> chars(text.begin(), text.end());
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  return CharTokenizer(std::move(chars), with_boundary);
}

CharTokenizer CharTokenizer::from_vocab(const std::vector<std::string>& vocab) {
  if (vocab.empty()) throw std::invalid_argument("CharTokenizer::from_vocab: the vocab is empty");
  const bool boundary = vocab[0].empty();
  std::vector<char32_t> chars;
  chars.reserve(vocab.size());
  for (std::size_t id = boundary ? 1 : 0; id < vocab.size(); ++id) {
    const auto bad = [&](const std::string& why) {
      // The entry as JSON, cut short: a hostile entry may be megabytes long.
      const std::string shown = nlohmann::json(vocab[id].substr(0, 32))
                                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return std::invalid_argument(fmt::format("CharTokenizer::from_vocab: entry {} ({}{}) {}", id, shown,
                                               vocab[id].size() > 32 ? fmt::format(", {} bytes", vocab[id].size()) : "",
                                               why));
    };
    if (vocab[id].empty()) throw bad("is the boundary \"\", which may only be entry 0");
    std::u32string decoded;
    try {
      decoded = decode_utf8(vocab[id]);
    } catch (const std::invalid_argument& e) {
      throw bad(fmt::format("is not UTF-8: {}", e.what()));
    }
    if (decoded.size() != 1) throw bad(fmt::format("has {} code points, not one", decoded.size()));
    if (!chars.empty() && decoded[0] <= chars.back())
      throw bad(fmt::format("({}) does not come after {} (entries are in strictly increasing code-point order)",
                            code_point_name(decoded[0]), code_point_name(chars.back())));
    chars.push_back(decoded[0]);
  }
  return CharTokenizer(std::move(chars), boundary);
}

std::optional<std::int64_t> CharTokenizer::find(char32_t c) const {
  const auto it = std::lower_bound(chars_.begin(), chars_.end(), c);
  if (it == chars_.end() || *it != c) return std::nullopt;
  return static_cast<std::int64_t>(it - chars_.begin()) + (boundary_ ? 1 : 0);
}

std::vector<std::int64_t> CharTokenizer::encode(std::u32string_view text) const {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto id = find(text[i]);
    if (!id) {
      // The character itself only when it can be written as UTF-8 (a surrogate cannot).
      const char32_t c = text[i];
      const bool scalar = c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF);
      throw std::invalid_argument(fmt::format("CharTokenizer::encode: character {}{} at index {} is not in the vocabulary",
                                              scalar ? "'" + encode_utf8(c) + "' " : "", "(" + code_point_name(c) + ")", i));
    }
    ids.push_back(*id);
  }
  return ids;
}

std::string CharTokenizer::decode(std::int64_t id) const {
  if (id < 0 || id >= size())
    throw std::invalid_argument(fmt::format("CharTokenizer::decode: id {} is outside the vocabulary [0, {})", id, size()));
  return vocab_[static_cast<std::size_t>(id)];
}

std::string CharTokenizer::decode(const std::vector<std::int64_t>& ids) const {
  std::string out;
  for (const std::int64_t id : ids) out += decode(id);
  return out;
}

std::string CharTokenizer::vocab_json() const { return nlohmann::json(vocab_).dump(); }

CharTokenizer CharTokenizer::from_vocab_json(std::string_view json) {
  // Every Unicode scalar value once, each written as "\uD83D\uDE00", at most: what a vocabulary can take. A JSON
  // tree costs several times its text, so a longer text is refused before it is parsed.
  constexpr std::size_t kMaxCodePoints = 0x110000 - 0x800, kMaxJsonBytes = 16 * (kMaxCodePoints + 1) + 16;
  if (json.size() > kMaxJsonBytes)
    throw std::invalid_argument(fmt::format("CharTokenizer::from_vocab_json: {} bytes of JSON, more than a vocabulary "
                                            "of every Unicode character needs ({})", json.size(), kMaxJsonBytes));
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(json);  // a strict parser: invalid UTF-8 or a lone surrogate escape is an error
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("CharTokenizer::from_vocab_json: not JSON: {}", json_error_text(e.what())));
  }
  if (!parsed.is_array())
    throw std::invalid_argument(fmt::format("CharTokenizer::from_vocab_json: the JSON value is of type {}, not an array of strings", parsed.type_name()));
  std::vector<std::string> vocab;
  vocab.reserve(parsed.size());
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    if (!parsed[i].is_string())
      throw std::invalid_argument(fmt::format("CharTokenizer::from_vocab_json: entry {} is of type {}, not a string", i,
                                              parsed[i].type_name()));
    vocab.push_back(parsed[i].get<std::string>());
  }
  return from_vocab(vocab);
}

}  // namespace cppgrad::data
