// with_unicode_white_space (data/text_split.h): the `\s` -> Unicode White_Space rewrite that both splitters apply,
// PCRE2's natively (data/text_split.cpp) and JavaScript's in the WebAssembly build (data/text_split_js.cpp).
#include <string>
#include <string_view>

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

}  // namespace cppgrad::data
