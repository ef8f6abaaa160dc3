#include "data/js_split_pattern.h"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "data/text_split.h"

namespace cppgrad::data {

namespace {

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The letters PCRE2's caseless matching (Unicode's simple case folding) makes equal to ASCII letter c, without [].
std::string caseless_letters(char c) {
  const char lower = static_cast<char>(c | 0x20), upper = static_cast<char>(c & ~0x20);
  std::string out{lower, upper};
  if (lower == 's') out += "\\u017F";  // LATIN SMALL LETTER LONG S
  if (lower == 'k') out += "\\u212A";  // KELVIN SIGN
  return out;
}

}  // namespace

std::string javascript_split_pattern(std::string_view pattern, RunPlace place) {
  const std::string original(pattern);
  const std::string p = with_unicode_white_space(pattern);
  const auto refuse = [&](std::string_view why) {
    return std::invalid_argument(
        fmt::format("split pattern '{}' cannot run on JavaScript's regex (the WebAssembly build): {}", original, why));
  };
  std::string out;
  out.reserve(p.size() + 64);
  std::vector<bool> groups;  // open groups, each true if caseless: (?i:...)
  int caseless = 0;          // how many open groups are caseless
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {  // an escape: copied whole, \p{...} and \P{...} with their braces
      if (i + 1 == p.size()) {
        out += c;
        continue;
      }
      const char next = p[i + 1];
      if (next == 'Q') throw refuse("\\Q...\\E quoting has no JavaScript form");
      std::size_t stop = i + 2;
      if ((next == 'p' || next == 'P') && stop < p.size() && p[stop] == '{') {
        const std::size_t close = p.find('}', stop);
        stop = close == std::string::npos ? p.size() : close + 1;
      }
      out.append(p, i, stop - i);
      i = stop - 1;
      continue;
    }
    if (caseless > 0 && static_cast<unsigned char>(c) >= 0x80)
      throw refuse("a non-ASCII character inside (?i:...) has no caseless rewrite here");
    if (in_class) {
      if (c == ']') in_class = false;
      if (caseless > 0 && c == '-' && out.back() != '[' && i + 1 < p.size() && p[i + 1] != ']')
        throw refuse("a class range inside (?i:...) has no caseless rewrite here");
      if (caseless > 0 && is_ascii_letter(c)) {
        out += caseless_letters(c);
      } else {
        out += c;
      }
      continue;
    }
    switch (c) {
      case '[':
        in_class = true;
        out += c;
        if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
        if (i + 1 < p.size() && p[i + 1] == ']') out += "\\]", ++i;  // PCRE2: a ']' first is a literal
        break;
      case '(':
        if (p.compare(i, 4, "(?i:") == 0) {
          groups.push_back(true);
          ++caseless;
          out += "(?:";
          i += 3;
        } else if (i + 2 < p.size() && p[i + 1] == '?' &&
                   (is_ascii_letter(p[i + 2]) || p[i + 2] == '-' || p[i + 2] == '^') && p[i + 2] != 'P') {
          throw refuse(fmt::format("the inline flags '{}' have no JavaScript form",
                                   p.substr(i, p.find_first_of(":)", i) - i + 1)));
        } else {
          groups.push_back(false);
          out += c;
        }
        break;
      case ')':
        if (!groups.empty()) {
          caseless -= groups.back() ? 1 : 0;
          groups.pop_back();
        }
        out += c;
        break;
      case '^':
        out += place.at_text_start ? "^" : "(?!)";
        break;
      case '$':
        out += place.at_text_end ? "$" : "(?!)";
        break;
      default:
        if (caseless > 0 && is_ascii_letter(c)) {
          out += '[' + caseless_letters(c) + ']';
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace cppgrad::data
