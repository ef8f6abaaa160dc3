#pragma once
// A character model's tokens as a reader sees them, written once for every command that shows them.
#include <cstdint>
#include <string>
#include <vector>

#include "data/char_tokenizer.h"

namespace cppgrad::cli {

// A token standing alone (a heatmap's label, a choice of --explain): the boundary as <b>, and the characters that
// would not show as ␣ (a space), \n and \t.
inline std::string token_label(const data::CharTokenizer& tok, std::int64_t id) {
  const std::string t = tok.decode(id);
  return t.empty() ? "<b>" : t == " " ? "␣" : t == "\n" ? "\\n" : t == "\t" ? "\\t" : t;
}

// Generated tokens as the text they stand for: the boundary dropped, every character as it is (newlines too).
inline std::string token_text(const data::CharTokenizer& tok, const std::vector<std::int64_t>& ids) {
  std::string s;
  for (const std::int64_t id : ids) s += tok.decode(id);
  return s;
}

}  // namespace cppgrad::cli
