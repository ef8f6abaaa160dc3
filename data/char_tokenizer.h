#pragma once
// A character-level tokenizer: one id per Unicode code point, ids in code-point order.
//
// With a boundary (lines mode, makemore's names), id 0 is <b>, the token that starts and ends each line, and the
// characters are ids 1..V-1; without one (running text), the characters are ids 0..V-1. The vocab (the tokens in id
// order, "" for <b>) is what a checkpoint stores, as a JSON array, so a model can be sampled without its data.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cppgrad::data {

class CharTokenizer {
 public:
  CharTokenizer() = default;  // empty (V = 0): a placeholder to assign a real one to
  // Every distinct code point of the text, in code-point order; ids from 1 if with_boundary (id 0 = <b>), else from 0.
  // std::invalid_argument for a code point that is not a Unicode scalar value (a surrogate, above U+10FFFF).
  static CharTokenizer from_text(std::u32string_view text, bool with_boundary);
  // From a vocab as a checkpoint stores it: tokens in id order, "" = the boundary, allowed only at id 0; every other
  // entry exactly one code point (UTF-8), strictly increasing. std::invalid_argument naming the bad entry.
  static CharTokenizer from_vocab(const std::vector<std::string>& vocab);

  std::int64_t size() const { return static_cast<std::int64_t>(vocab_.size()); }  // V, <b> included
  bool has_boundary() const { return boundary_; }                                 // id 0 is <b>
  std::optional<std::int64_t> find(char32_t c) const;
  // [n] code points -> [n] ids. std::invalid_argument naming the character (as itself and U+XXXX) and its index
  // when it is not in the vocab.
  std::vector<std::int64_t> encode(std::u32string_view text) const;
  std::string decode(std::int64_t id) const;  // UTF-8; "" for <b>; std::invalid_argument for an id outside [0, V)
  std::string decode(const std::vector<std::int64_t>& ids) const;
  const std::vector<std::string>& vocab() const { return vocab_; }  // the tokens in id order, "" for <b>
  std::string vocab_json() const;                                  // JSON array of vocab(), e.g. ["","a","b"]
  static CharTokenizer from_vocab_json(std::string_view json);      // the inverse; std::invalid_argument on bad JSON

 private:
  CharTokenizer(std::vector<char32_t> chars, bool boundary);
  std::vector<char32_t> chars_;     // [V - boundary] sorted: chars_[i] has id i + boundary
  bool boundary_ = false;
  std::vector<std::string> vocab_;  // [V] UTF-8 of each id
};

}  // namespace cppgrad::data
