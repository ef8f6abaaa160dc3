#pragma once
// A model's tokens as a reader sees them (a heatmap's labels, a sample's text), written once for the programs and
// the page.
#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "data/utf8.h"

namespace cppgrad::data {

// A token standing alone (a heatmap's label, a choice of --explain): the boundary as <b>, its text otherwise, with what
// would not show written as ␣ (a space), \n and \t, and a BPE token's part of a character as U+FFFD.
inline std::string token_label(const data::Tokenizer& tok, std::int64_t id) {
  const std::string t = data::to_valid_utf8(tok.token_bytes(id));
  if (t.empty()) return "<b>";
  std::string label;
  for (const char c : t) label += c == ' ' ? "␣" : c == '\n' ? "\\n" : c == '\t' ? "\\t" : std::string(1, c);
  return label;
}

// Generated tokens as the text they stand for: the boundary dropped, every character as it is (newlines too), and
// bytes that are no UTF-8 (a BPE's sample may stop inside a character) as U+FFFD.
inline std::string token_text(const data::Tokenizer& tok, const std::vector<std::int64_t>& ids) {
  return data::to_valid_utf8(tok.decode(ids));
}

}  // namespace cppgrad::data
