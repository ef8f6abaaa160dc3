// What both splitters of data/text_split.h share, PCRE2's natively (data/text_split.cpp) and JavaScript's in the
// WebAssembly build (data/text_split_js.cpp): the `\s` -> Unicode White_Space rewrite, and the pieces as a vector.
#include <string>
#include <string_view>
#include <vector>

#include "data/text_split.h"

namespace cppgrad::data {

std::string with_unicode_white_space(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char next = pattern[++i];
    if (next == 's') {
      out += "\\p{White_Space}";
    } else if (next == 'S') {
      out += "\\P{White_Space}";
    } else if (next == 'Q') {  // \Q...\E quotes literally: copy it untouched
      const std::size_t end = pattern.find("\\E", i + 1);
      const std::size_t stop = end == std::string_view::npos ? pattern.size() : end + 2;
      out += '\\';
      out.append(pattern.substr(i, stop - i));
      i = stop - 1;
    } else {  // any other escape (\p, \\, \r, ...) stays as it is
      out += '\\';
      out += next;
    }
  }
  return out;
}

std::vector<std::string_view> TextSplitter::pieces(std::string_view text) const {
  std::vector<std::string_view> out;
  for_each_piece(text, [&](std::string_view piece) { out.push_back(piece); });
  return out;
}

}  // namespace cppgrad::data
