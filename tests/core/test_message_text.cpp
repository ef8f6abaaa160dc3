// User text in an error message (core/message_text.h): every byte visible on one line, nothing that drives the
// terminal or reorders the line, and a long text cut between two characters with its start and end kept.
#include <gtest/gtest.h>

#include <string>

#include "core/message_text.h"

namespace cppgrad {
namespace {

using namespace std::string_literals;

TEST(MessageText, EscapesControlsAndLeavesTextAlone) {
  EXPECT_EQ(escape_controls("plain text, \xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "plain text, \xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(escape_controls("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(escape_controls("nul\0after"s), "nul\\0after");
  EXPECT_EQ(escape_controls("\x1b[31mred\x7f"), "\\x1B[31mred\\x7F");
  EXPECT_EQ(escape_controls("back\\slash"), "back\\slash");  // not doubled: for reading, not for parsing back
}

TEST(MessageText, EscapesWhatReordersOrBreaksALineInUtf8) {
  EXPECT_EQ(escape_controls("\xE2\x80\xAE" "evil"), "\\u202Eevil");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(escape_controls("\xE2\x81\xA6x\xE2\x81\xA9"), "\\u2066x\\u2069");  // isolates
  EXPECT_EQ(escape_controls("\xE2\x80\x8F\xD8\x9C"), "\\u200F\\u061C");  // marks
  EXPECT_EQ(escape_controls("a\xE2\x80\xA8" "b"), "a\\u2028b");  // LINE SEPARATOR
  EXPECT_EQ(escape_controls("\xC2\x9B" "31m"), "\\u009B31m");  // C1 CSI
  EXPECT_EQ(escape_controls("\xE2\x80\x94"), "\xE2\x80\x94");  // an em dash is text
}

TEST(MessageText, ShowsInvalidUtf8AsBytes) {
  EXPECT_EQ(escape_controls("w\xffrld"), "w\\xFFrld");
  EXPECT_EQ(escape_controls("\xC0\xAF"), "\\xC0\\xAF");          // overlong '/'
  EXPECT_EQ(escape_controls("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a surrogate
  EXPECT_EQ(escape_controls("cut \xE2\x82"), "cut \\xE2\\x82");   // a character cut short
}

TEST(MessageText, QuotesAPieceOfTextAndCutsItsTail) {
  EXPECT_EQ(quoted_text("ab\ncd"), "'ab\\ncd'");
  EXPECT_EQ(quoted_text(std::string(100, 'a'), 10), "'aaaaaaaaaa...' (100 bytes)");
  // Never inside a character: 4 bytes of three 2-byte characters keep two.
  EXPECT_EQ(quoted_text("\xC3\xA9\xC3\xA9\xC3\xA9", 5), "'\xC3\xA9\xC3\xA9...' (6 bytes)");
  // Nor inside an escape.
  EXPECT_EQ(quoted_text("a\nb", 2), "'a...' (3 bytes)");
}

TEST(MessageText, AMessageLineKeepsItsStartAndItsReason) {
  EXPECT_EQ(message_line("short\nline"), "short\\nline");
  const std::string message = "prog cmd: --prompt '" + std::string(100'000, 'z') + "': not in the vocabulary";
  const std::string line = message_line(message);
  EXPECT_LE(line.size(), kMaxMessageBytes + 60);
  EXPECT_TRUE(line.starts_with("prog cmd: --prompt 'zzz")) << line;
  EXPECT_TRUE(line.ends_with("zzz': not in the vocabulary")) << line;
  EXPECT_NE(line.find(" ... (cut: " + std::to_string(message.size()) + " bytes in all) ... "), std::string::npos);
  // A message of controls is cut between escapes, and stays one line whatever it holds.
  const auto newlines = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "\\n";
    return s;
  };
  EXPECT_EQ(message_line(std::string(5000, '\n'), 100),
            newlines(33) + " ... (cut: 5000 bytes in all) ... " + newlines(17));  // 2/3 of 100 bytes, then 1/3
  EXPECT_EQ(message_line(std::string(1000, 'x')), std::string(1000, 'x'));  // up to the limit: whole
}

}  // namespace
}  // namespace cppgrad
