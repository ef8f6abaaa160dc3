#pragma once
// Text from a user's files and flags inside an error message. Every refusal is one line on stderr, so what a file or a
// flag holds must neither break that line (a newline), hide the rest of it (a NUL: std::exception::what() is a C
// string), reorder it (a right-to-left override), drive the terminal (an escape sequence) nor flood it (a 10 MB
// string quoted whole).
//
//   throw std::invalid_argument("unexpected entry " + quoted_text(name));   // 'evil\nsecond line' on one line
//   std::cerr << message_line(e.what()) << "\n";                            // what a program prints
#include <cstddef>
#include <string>
#include <string_view>

namespace cppgrad {

// Every byte of `text` visible on one line: \n, \r, \t, NUL as \0, every other byte below 0x20 and 0x7F as \xNN;
// the C1 controls (U+0080..U+009F), the bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E,
// U+200F, U+202A..U+202E, U+2066..U+2069) and the line and paragraph separators (U+2028, U+2029) as \uXXXX; a byte
// that is not part of valid UTF-8 as \xNN. All other text stays as it is. A backslash is not doubled: the text is
// for a person to read, not to parse back.
std::string escape_controls(std::string_view text);

// Escaped as above and cut to about max_bytes: a longer text keeps its start and its end around
// " ... (cut: N bytes in all) ... ", N the length of `text`; never cut inside a character or an escape.
std::string shortened(std::string_view text, std::size_t max_bytes);

// A piece of user text quoted in a message: 'text', escaped, and past max_bytes its start: 'text...' (N bytes).
std::string quoted_text(std::string_view text, std::size_t max_bytes = 80);

// The whole line a program prints for a refusal: escaped, and shortened past max_bytes (1000: what a reader reads,
// with the reason, usually at the end, kept).
inline constexpr std::size_t kMaxMessageBytes = 1000;
std::string message_line(std::string_view message, std::size_t max_bytes = kMaxMessageBytes);

}  // namespace cppgrad
