// The character tokenizer: ids in code-point order, <b> at id 0 or no boundary at all, exact round trips, and a
// checkpoint's vocab refused unless it is one a tokenizer could have written.
#include <string>
#include <vector>

#include "data/char_tokenizer.h"
#include "data/utf8.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::CharTokenizer;
using V = std::vector<std::string>;

TEST(CharTokenizer, IdsFollowCodePointOrderAfterTheBoundary) {
  // z (U+007A) < é (U+00E9) < € (U+20AC) < 😀 (U+1F600): byte order of the UTF-8 would agree here, first-seen order not.
  const std::u32string text = data::decode_utf8("\xF0\x9F\x98\x80z\xE2\x82\xAC\xC3\xA9zz");
  const auto tok = CharTokenizer::from_text(text, /*with_boundary=*/true);
  EXPECT_TRUE(tok.has_boundary());
  EXPECT_EQ(tok.size(), 5);
  EXPECT_EQ(tok.vocab(), (V{"", "z", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}));
  EXPECT_EQ(tok.find(U'z'), 1);
  EXPECT_EQ(tok.find(static_cast<char32_t>(0x1F600)), 4);
  EXPECT_EQ(tok.find(U'a'), std::nullopt);
  EXPECT_EQ(tok.encode(text), (std::vector<std::int64_t>{4, 1, 3, 2, 1, 1}));
}

TEST(CharTokenizer, WithoutABoundaryIdsStartAtZero) {
  const auto tok = CharTokenizer::from_text(U"banana\n", /*with_boundary=*/false);
  EXPECT_FALSE(tok.has_boundary());
  EXPECT_EQ(tok.vocab(), (V{"\n", "a", "b", "n"}));
  EXPECT_EQ(tok.encode(U"ban\n"), (std::vector<std::int64_t>{2, 1, 3, 0}));
  EXPECT_EQ(tok.decode(0), "\n");
}

TEST(CharTokenizer, EncodeThenDecodeGivesTheTextBack) {
  const std::string utf8 = "Zw\xC3\xB6lf Boxk\xC3\xA4mpfer jagen \xE2\x82\xAC \xF0\x9F\x98\x80 \"quer\"\n\t\\";
  for (const bool boundary : {true, false}) {
    const auto tok = CharTokenizer::from_text(data::decode_utf8(utf8), boundary);
    const auto ids = tok.encode(data::decode_utf8(utf8));
    EXPECT_EQ(tok.decode(ids), utf8);
    EXPECT_EQ(static_cast<std::int64_t>(ids.size()), 36);
  }
}

TEST(CharTokenizer, IdZeroIsTheBoundaryAndDecodesToNothing) {
  const auto tok = CharTokenizer::from_text(U"ab", true);
  EXPECT_EQ(tok.decode(0), "");
  EXPECT_EQ(tok.decode(std::vector<std::int64_t>{0, 1, 2, 0}), "ab");
  EXPECT_EQ(tok.decode(2), "b");
  EXPECT_THROW_MSG(tok.decode(3), std::invalid_argument, "id 3 is outside the vocabulary [0, 3)");
  EXPECT_THROW_MSG(tok.decode(-1), std::invalid_argument, "id -1");
}

TEST(CharTokenizer, EncodeNamesAMissingCharacterAndItsIndex) {
  const auto tok = CharTokenizer::from_text(U"abc", true);
  EXPECT_THROW_MSG(tok.encode(U"abqc"), std::invalid_argument, "character 'q' (U+0071) at index 2 is not in the vocabulary");
  EXPECT_THROW_MSG(tok.encode(std::u32string(1, static_cast<char32_t>(0x20AC))), std::invalid_argument,
                   "'\xE2\x82\xAC' (U+20AC) at index 0");
}

TEST(CharTokenizer, FromVocabRebuildsTheSameTokenizer) {
  const auto tok = CharTokenizer::from_text(data::decode_utf8("hello w\xC3\xB6rld"), true);
  const auto back = CharTokenizer::from_vocab(tok.vocab());
  EXPECT_EQ(back.vocab(), tok.vocab());
  EXPECT_TRUE(back.has_boundary());
  EXPECT_EQ(back.find(U'w'), tok.find(U'w'));
  const auto plain = CharTokenizer::from_vocab(V{"a", "b"});
  EXPECT_FALSE(plain.has_boundary());
  EXPECT_EQ(plain.find(U'a'), 0);
}

TEST(CharTokenizer, FromVocabRefusesWhatNoTokenizerWrites) {
  EXPECT_THROW_MSG(CharTokenizer::from_vocab(V{}), std::invalid_argument, "the vocab is empty");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab(V{"", "a", ""}), std::invalid_argument,
                   "entry 2 (\"\") is the boundary \"\", which may only be entry 0");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab(V{"a", "bc"}), std::invalid_argument, "entry 1 (\"bc\") has 2 code points, not one");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab(V{"", "b", "a"}), std::invalid_argument,
                   "entry 2 (\"a\") (U+0061) does not come after U+0062");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab(V{"a", "a"}), std::invalid_argument, "entry 1 (\"a\") (U+0061) does not come after");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab(V{"", "\xC3"}), std::invalid_argument,
                   "entry 1 (\"\xEF\xBF\xBD\") is not UTF-8: invalid UTF-8 at byte offset 0");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab(V{"\xED\xA0\x80"}), std::invalid_argument, "surrogate");
}

TEST(CharTokenizer, VocabJsonRoundTrips) {
  const auto tok = CharTokenizer::from_text(data::decode_utf8("a\"\\\n\x01\xC3\xA9"), true);
  const std::string json = tok.vocab_json();
  EXPECT_EQ(json, "[\"\",\"\\u0001\",\"\\n\",\"\\\"\",\"\\\\\",\"a\",\"\xC3\xA9\"]");
  EXPECT_EQ(CharTokenizer::from_vocab_json(json).vocab(), tok.vocab());
  EXPECT_EQ(CharTokenizer::from_vocab_json("[\"\", \"a\", \"\\u00e9\"]").vocab(), (V{"", "a", "\xC3\xA9"}));
}

// A checkpoint's "vocab" is anyone's: ten million entries once cost a gigabyte before the refusal, a 10 MB entry was
// echoed whole, and the parser's own tag leaked into the message.
TEST(CharTokenizer, AHostileVocabIsRefusedAtTheCostOfItsSize) {
  std::string many = "[\"\"";
  for (int i = 0; i < 5'000'000; ++i) many += ",\"x\"";
  many += "]";
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json(many), std::invalid_argument,
                   "from_vocab_json: 20000004 bytes of JSON, more than a vocabulary of every Unicode character needs");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab(V{"a", std::string(100, 'b')}), std::invalid_argument,
                   "entry 1 (\"" + std::string(32, 'b') + "\", 100 bytes) has 100 code points, not one");
  try {
    CharTokenizer::from_vocab_json("[\"\", \"a\"");
    ADD_FAILURE() << "a vocabulary without its ] was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("CharTokenizer::from_vocab_json: the vocabulary is not JSON: parse error"));
  }
  // Read as the parser goes, straight into strings: an array inside is refused where it starts, however deep it goes
  // (a million levels once overflowed the stack of a message's dump), and the entries are bounded by the most a
  // vocabulary holds, every Unicode scalar value and the boundary.
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json("[[[["), std::invalid_argument,
                   "CharTokenizer::from_vocab_json: the vocabulary nests arrays and objects more than 1 deep");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json(std::string(1'000'000, '[')), std::invalid_argument,
                   "nests arrays and objects more than 1 deep");
  std::string empties = "[";
  for (int i = 0; i < 1'200'000; ++i) empties += i == 0 ? "\"\"" : ",\"\"";
  empties += "]";
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json(empties), std::invalid_argument,
                   "CharTokenizer::from_vocab_json: the vocabulary holds more than 1112066 JSON values");
}

TEST(CharTokenizer, FromVocabJsonRefusesBadJson) {
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json("[\"\", \"a\""), std::invalid_argument, "from_vocab_json: the vocabulary is not JSON");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json("{\"a\": 1}"), std::invalid_argument, "of type object, not an array of strings");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json("[\"\", 7]"), std::invalid_argument, "entry 1 is of type number, not a string");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json("[\"\", \"\\ud800\"]"), std::invalid_argument, "not JSON");
  EXPECT_THROW_MSG(CharTokenizer::from_vocab_json("[\"b\", \"a\"]"), std::invalid_argument, "does not come after");
}

}  // namespace
}  // namespace cppgrad
