#include "core/message_text.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cppgrad {

namespace {

bool continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// The length of the valid UTF-8 sequence at text[i] (shortest form, no surrogate, at most U+10FFFF), or 0.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = at(i);
  if (lead < 0x80) return 1;
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size() || at(i + 1) < low || at(i + 1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (!continuation(at(i + k))) return 0;
  return n;
}

char32_t decode(std::string_view text, std::size_t i, std::size_t n) {
  const auto at = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(text[k])); };
  char32_t c = at(i) & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < n; ++k) c = (c << 6) | (at(i + k) & 0x3F);
  return c;
}

// Characters that change how a terminal shows the rest of the line: C1 controls, bidirectional formatting, and the
// separators some terminals and editors break lines at.
bool shown_as_code_point(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

void append_hex(std::string& out, std::uint32_t value, int digits) {
  constexpr char kHex[] = "0123456789ABCDEF";
  for (int d = digits - 1; d >= 0; --d) out += kHex[(value >> (4 * d)) & 0xF];
}

// Appends the escaped form of the character (or the invalid byte) at text[i]; returns the index after it.
std::size_t escape_one(std::string_view text, std::size_t i, std::string& out) {
  const auto b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) {
    if (b == '\n') out += "\\n";
    else if (b == '\r') out += "\\r";
    else if (b == '\t') out += "\\t";
    else if (b == 0) out += "\\0";
    else if (b < 0x20 || b == 0x7F) append_hex(out += "\\x", b, 2);
    else out += static_cast<char>(b);
    return i + 1;
  }
  const std::size_t n = utf8_length(text, i);
  if (n == 0) {
    append_hex(out += "\\x", b, 2);
    return i + 1;
  }
  if (const char32_t c = decode(text, i, n); shown_as_code_point(c)) append_hex(out += "\\u", c, 4);
  else out.append(text.substr(i, n));
  return i + n;
}

// The escaped start of `text` that fits in budget bytes; `end` is set to where it stopped in `text`.
std::string escaped_head(std::string_view text, std::size_t budget, std::size_t& end) {
  std::string head, unit;
  std::size_t i = 0;
  while (i < text.size()) {
    unit.clear();
    const std::size_t next = escape_one(text, i, unit);
    if (head.size() + unit.size() > budget) break;
    head += unit;
    i = next;
  }
  end = i;
  return head;
}

}  // namespace

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) i = escape_one(text, i, out);
  return out;
}

std::string shortened(std::string_view text, std::size_t max_bytes) {
  std::size_t end = 0;
  std::string whole = escaped_head(text, max_bytes, end);
  if (end == text.size()) return whole;
  // The start, then the end (the reason of a message usually closes it), each cut between two characters.
  const std::size_t head_budget = max_bytes * 2 / 3, tail_budget = max_bytes - head_budget;
  const std::string head = escaped_head(text, head_budget, end);
  std::size_t start = text.size() > tail_budget ? std::max(end, text.size() - tail_budget) : end;
  while (start < text.size() && continuation(static_cast<unsigned char>(text[start]))) ++start;
  std::vector<std::string> units;
  std::size_t tail_size = 0;
  for (std::size_t i = start; i < text.size();) {
    units.emplace_back();
    i = escape_one(text, i, units.back());
    tail_size += units.back().size();
  }
  std::size_t first = 0;
  while (first < units.size() && tail_size > tail_budget) tail_size -= units[first++].size();
  std::string out = head + " ... (cut: " + std::to_string(text.size()) + " bytes in all) ... ";
  for (std::size_t k = first; k < units.size(); ++k) out += units[k];
  return out;
}

std::string quoted_text(std::string_view text, std::size_t max_bytes) {
  std::size_t end = 0;
  const std::string head = escaped_head(text, max_bytes, end);
  if (end == text.size()) return "'" + head + "'";
  return "'" + head + "...' (" + std::to_string(text.size()) + " bytes)";
}

std::string message_line(std::string_view message, std::size_t max_bytes) { return shortened(message, max_bytes); }

}  // namespace cppgrad
