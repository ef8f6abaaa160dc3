// Strict UTF-8: every valid form decodes and encodes back, each kind of bad sequence is refused with the byte offset
// of its first byte; read_text_file refuses directories and files over its bound before reading them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "data/utf8.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::decode_utf8;
using data::encode_utf8;
using data::utf8_sequence_length;

TEST(Utf8, DecodesOneToFourByteFormsAndEncodesThemBack) {
  // A (1 byte), é U+00E9 (2), € U+20AC (3), 😀 U+1F600 (4), and each length's smallest and largest code point.
  const std::string bytes = "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
  EXPECT_EQ(decode_utf8(bytes), (std::u32string{U'A', 0xE9, 0x20AC, 0x1F600}));
  EXPECT_EQ(encode_utf8(decode_utf8(bytes)), bytes);
  for (const char32_t c : {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xD7FFu, 0xE000u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    const std::string e = encode_utf8(static_cast<char32_t>(c));
    EXPECT_EQ(e.size(), c < 0x80 ? 1u : c < 0x800 ? 2u : c < 0x10000 ? 3u : 4u) << data::code_point_name(c);
    EXPECT_EQ(decode_utf8(e), std::u32string(1, static_cast<char32_t>(c))) << data::code_point_name(c);
  }
  EXPECT_EQ(decode_utf8(""), U"");
}

// The message of decode_utf8's refusal of `bytes`, "" if it accepts them.
std::string refusal(const std::string& bytes) {
  try {
    decode_utf8(bytes);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Utf8, EachKindOfBadSequenceIsRefusedAtItsFirstByte) {
  struct Case { std::string bytes, offset, why; };
  const Case cases[] = {
      {"ab\x80", "offset 2:", "continuation byte 0x80 without a lead byte"},
      {"a\xC3\xA9\xBF", "offset 3:", "continuation byte 0xBF"},      // one continuation too many
      {"xy\xC3", "offset 2:", "truncated"},                          // cut off by the end
      {"x\xE2\x82", "offset 1:", "truncated"},
      {"\xE2\x82" "A", "offset 0:", "byte 3 is 0x41"},              // interrupted by ASCII
      {"ok\xF0\x9F\x98", "offset 2:", "truncated"},
      {"\xC0\x80", "offset 0:", "overlong 2-byte form of U+0000"},   // the classic overlong NUL
      {"a\xC1\xBF", "offset 1:", "overlong 2-byte form of U+007F"},
      {"ab\xE0\x9F\xBF", "offset 2:", "overlong 3-byte form of U+07FF"},
      {"\xF0\x8F\xBF\xBF", "offset 0:", "overlong 4-byte form of U+FFFF"},
      {"z\xED\xA0\x80", "offset 1:", "surrogate U+D800"},
      {"\xED\xBF\xBF", "offset 0:", "surrogate U+DFFF"},
      {"abc\xF4\x90\x80\x80", "offset 3:", "U+110000, above U+10FFFF"},
      {"\xF7\xBF\xBF\xBF", "offset 0:", "above U+10FFFF"},
      {"a\xF8\x88\x80\x80\x80", "offset 1:", "byte 0xF8 never occurs"},
      {"\xFF", "offset 0:", "byte 0xFF never occurs"},
  };
  for (const Case& c : cases) {
    const std::string what = refusal(c.bytes);
    EXPECT_THAT(what, ::testing::HasSubstr("invalid UTF-8 at byte " + c.offset)) << c.why;
    EXPECT_THAT(what, ::testing::HasSubstr(c.why));
  }
  EXPECT_EQ(refusal("\xF4\x8F\xBF\xBF"), "");  // U+10FFFF itself is fine: the check can tell the two apart
}

TEST(Utf8, EncodeRefusesWhatIsNotAScalarValue) {
  EXPECT_THROW_MSG(encode_utf8(static_cast<char32_t>(0xD800)), std::invalid_argument, "U+D800 is not a Unicode scalar value");
  EXPECT_THROW_MSG(encode_utf8(std::u32string{U'a', static_cast<char32_t>(0x110000)}), std::invalid_argument, "U+110000");
}

// What a sample shows: valid text as it is; each maximal bad part as one U+FFFD, a character cut short at the end too.
TEST(Utf8, ToValidUtf8ReplacesEachBadPartWithOneReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(data::to_valid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xF0\x9F\x98\x80");  // unchanged
  EXPECT_EQ(data::to_valid_utf8("caf\xC3"), "caf" + fffd);                  // é cut after its first byte
  EXPECT_EQ(data::to_valid_utf8("\xF0\x9F\x98"), fffd);                     // a 4-byte emoji's first 3: one U+FFFD
  EXPECT_EQ(data::to_valid_utf8("a\x80\x80" "b"), "a" + fffd + fffd + "b");    // two stray continuation bytes
  EXPECT_EQ(data::to_valid_utf8("\xC0\xAF"), fffd + fffd);                  // overlong '/': C0 is never a lead
  EXPECT_EQ(data::to_valid_utf8("\xED\xA0\x80"), fffd + fffd + fffd);       // a surrogate: ED takes 80..9F only
  EXPECT_EQ(data::to_valid_utf8("\xE2\x82x"), fffd + "x");                  // cut short mid-text, the next kept
  EXPECT_EQ(data::to_valid_utf8("\xFF"), fffd);
  EXPECT_EQ(data::to_valid_utf8(""), "");
}

TEST(Utf8, SequenceLengthIsWhatDecodeAccepts) {
  EXPECT_EQ(utf8_sequence_length("a", 0), 1u);
  EXPECT_EQ(utf8_sequence_length("\xC3\xA9", 0), 2u);          // é
  EXPECT_EQ(utf8_sequence_length("\xE2\x82\xAC", 0), 3u);      // €
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x98\x80", 0), 4u);  // U+1F600
  EXPECT_EQ(utf8_sequence_length("x\xC3\xA9", 1), 2u);
  EXPECT_EQ(utf8_sequence_length("\x80", 0), 0u);                // a continuation byte
  EXPECT_EQ(utf8_sequence_length("\xC0\x80", 0), 0u);            // overlong
  EXPECT_EQ(utf8_sequence_length("\xED\xA0\x80", 0), 0u);        // a surrogate
  EXPECT_EQ(utf8_sequence_length("\xF4\x90\x80\x80", 0), 0u);    // past U+10FFFF
  EXPECT_EQ(utf8_sequence_length("\xE2\x82", 0), 0u);            // cut short
  // Every pair of bytes: the sequence found at the start is one decode_utf8 accepts, and none is found where it
  // refuses both the first byte alone and the pair.
  const auto decodes = [](const std::string& bytes) {
    try {
      decode_utf8(bytes);
      return true;
    } catch (const std::invalid_argument&) {
      return false;
    }
  };
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      const std::string pair{static_cast<char>(a), static_cast<char>(b)};
      const std::size_t n = utf8_sequence_length(pair, 0);
      if (n > 0) {
        EXPECT_TRUE(decodes(pair.substr(0, n))) << a << " " << b;
      } else {
        EXPECT_FALSE(decodes(pair.substr(0, 1)) || decodes(pair)) << a << " " << b;
      }
    }
}

TEST(ReadTextFile, ReadsAFileWhole) {
  test::TempDir dir;
  const auto path = (dir.path / "t.txt").string();
  std::ofstream(path, std::ios::binary) << "line one\r\nzw\xC3\xA9i\n";
  EXPECT_EQ(data::read_text_file(path), "line one\r\nzw\xC3\xA9i\n");
  EXPECT_EQ(data::read_text_file(path, 16), "line one\r\nzw\xC3\xA9i\n");  // exactly at the bound is allowed
}

TEST(ReadTextFile, RefusesAFileOverTheBoundBeforeReadingIt) {
  test::TempDir dir;
  const auto path = (dir.path / "big.txt").string();
  std::ofstream(path, std::ios::binary) << std::string(100, 'x');
  // "is 100 bytes" is the size looked up before reading; a refusal while reading says "holds more than".
  EXPECT_THROW_MSG(data::read_text_file(path, 99), std::runtime_error, path + ": is 100 bytes, more than the limit of 99");
}

// A pipe has no size and its writer decides its end: a FIFO with no writer once hung the program, one fed from
// /dev/zero filled a gigabyte. Refused at once, without waiting for a writer.
TEST(ReadTextFile, RefusesAPipeWithoutWaitingForItsWriter) {
  test::TempDir dir;
  const auto path = (dir.path / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_THROW_MSG(data::read_text_file(path, 1000), std::runtime_error,
                   path + ": is a pipe, not a file (save what it carries to a file, then give that)");
}

TEST(ReadTextFile, RefusesADirectoryAndAMissingFile) {
  test::TempDir dir;
  EXPECT_THROW_MSG(data::read_text_file(dir.path.string()), std::runtime_error, dir.path.string() + ": is a directory");
  const auto missing = (dir.path / "missing.txt").string();
  EXPECT_THROW_MSG(data::read_text_file(missing), std::runtime_error, missing + ": cannot open");
}

// A device has no size and may have no end: /dev/zero once filled a gigabyte before the bound refused it.
TEST(ReadTextFile, RefusesADevice) {
  EXPECT_THROW_MSG(data::read_text_file("/dev/zero"), std::runtime_error, "/dev/zero: is a device or socket, not a file");
}

}  // namespace
}  // namespace cppgrad
