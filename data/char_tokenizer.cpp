#include "data/char_tokenizer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

#include "core/json_bounded.h"
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

namespace {

// Every Unicode scalar value once, and the boundary "": the most entries a vocabulary has.
constexpr std::size_t kMaxCodePoints = 0x110000 - 0x800, kMaxEntries = kMaxCodePoints + 1;

// The vocabulary's JSON read into its strings as the parser goes, no JSON tree: an array of strings, nothing else.
class VocabReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::string> vocab;

  bool null() override { return other("null"); }
  bool boolean(bool) override { return other("boolean"); }
  bool number_integer(number_integer_t) override { return other("number"); }
  bool number_unsigned(number_unsigned_t) override { return other("number"); }
  bool number_float(number_float_t, const string_t&) override { return other("number"); }
  bool binary(binary_t&) override { return other("binary"); }
  bool string(string_t& s) override {
    if (!in_array_) other("string");
    vocab.push_back(std::move(s));
    return true;
  }
  bool start_array(std::size_t) override {
    if (in_array_) other("array");  // not reached: json_bounded refuses an array inside first (depth 1)
    in_array_ = true;
    return true;
  }
  bool start_object(std::size_t) override { return other("object"); }
  bool end_array() override { return true; }
  bool end_object() override { return true; }
  bool key(string_t&) override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool other(const char* type) const {
    if (!in_array_)
      throw std::invalid_argument(fmt::format("CharTokenizer::from_vocab_json: the JSON value is of type {}, not an "
                                              "array of strings", type));
    throw std::invalid_argument(fmt::format("CharTokenizer::from_vocab_json: entry {} is of type {}, not a string",
                                            vocab.size(), type));
  }
  bool in_array_ = false;
};

}  // namespace

CharTokenizer CharTokenizer::from_vocab_json(std::string_view json) {
  // Every entry written as "\uD83D\uDE00", at most: what a vocabulary can take; a longer text is refused unread.
  constexpr std::size_t kMaxJsonBytes = 16 * kMaxEntries + 16;
  if (json.size() > kMaxJsonBytes)
    throw std::invalid_argument(fmt::format("CharTokenizer::from_vocab_json: {} bytes of JSON, more than a vocabulary "
                                            "of every Unicode character needs ({})", json.size(), kMaxJsonBytes));
  // A strict parser (invalid UTF-8 or a lone surrogate escape is an error), and bounds: one array of at most
  // kMaxEntries values, read straight into strings.
  VocabReader reader;
  sax_parse_bounded(json, {.max_depth = 1, .max_values = 1 + kMaxEntries}, "CharTokenizer::from_vocab_json: the vocabulary",
                    reader);
  return from_vocab(reader.vocab);
}

}  // namespace cppgrad::data
