// The regex split (data/text_split.h): GPT-2's pattern on PCRE2, white space as tiktoken (Rust) means it, and
// invalid UTF-8 kept as pieces of its own so no byte is lost.
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "data/bpe.h"
#include "data/text_split.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::TextSplitter;
using Pieces = std::vector<std::string_view>;

std::string joined(const Pieces& pieces) {
  std::string s;
  for (const auto p : pieces) s += p;
  return s;
}

TEST(TextSplit, Gpt2PatternSplitsWordsNumbersPunctuationAndSpace) {
  const TextSplitter split(data::kGpt2SplitPattern);
  EXPECT_EQ(split.pieces("Hello world!! 123abc"), (Pieces{"Hello", " world", "!!", " 123", "abc"}));
  // \s+(?!\S): a run of spaces gives all but its last to the run, the last space joins the next word.
  EXPECT_EQ(split.pieces("a   b"), (Pieces{"a", "  ", " b"}));
  EXPECT_EQ(split.pieces("I'm HE'S"), (Pieces{"I", "'m", " HE", "'", "S"}));  // GPT-2's 's is case-sensitive
  EXPECT_EQ(split.pieces(""), Pieces{});
}

TEST(TextSplit, Gpt4PatternIgnoresCaseInContractionsAndGroupsThreeDigits) {
  const TextSplitter split(data::kGpt4SplitPattern);
  EXPECT_EQ(split.pieces("HE'S 1234567"), (Pieces{"HE", "'S", " ", "123", "456", "7"}));
}

TEST(TextSplit, WhiteSpaceIsUnicodesWhiteSpacePropertyAsInTiktoken) {
  const TextSplitter split(data::kGpt2SplitPattern);
  // U+0085 NEXT LINE is white space (Rust's \s; JavaScript's \s lacks it): "a", then U+0085 alone, then "b".
  EXPECT_EQ(split.pieces("a\xC2\x85" "b"), (Pieces{"a", "\xC2\x85", "b"}));
  // U+FEFF is not (JavaScript's \s has it): it is punctuation to the pattern, and takes the space before it.
  EXPECT_EQ(split.pieces("x \xEF\xBB\xBFy"), (Pieces{"x", " \xEF\xBB\xBF", "y"}));
  // U+180E is not either (PCRE2's own \s would say it is): this is why \s is compiled as \p{White_Space}.
  EXPECT_EQ(split.pieces("a \xE1\xA0\x8E" "b"), (Pieces{"a", " \xE1\xA0\x8E", "b"}));
  EXPECT_EQ(data::with_unicode_white_space(R"([^\s\p{L}]|\s+(?!\S)|\\s|\Q\s\E)"),
            R"([^\p{White_Space}\p{L}]|\p{White_Space}+(?!\P{White_Space})|\\s|\Q\s\E)");
}

TEST(TextSplit, InvalidUtf8BecomesPiecesOfItsOwnAndNothingIsLost) {
  const TextSplitter split(data::kGpt2SplitPattern);
  // A lone continuation byte, a truncated 3-byte sequence, an overlong '/', a surrogate, bytes F5..FF.
  const std::string text = "ab\x80" "cd \xE2\x82 ef\xC0\xAF gh\xED\xA0\x80!\xFF\xFE";
  const Pieces pieces = split.pieces(text);
  EXPECT_EQ(joined(pieces), text);
  EXPECT_EQ(pieces, (Pieces{"ab", "\x80", "cd", " ", "\xE2\x82", " ef", "\xC0\xAF", " gh", "\xED\xA0\x80", "!",
                            "\xFF\xFE"}));
}

TEST(TextSplit, PiecesCoverAnyBytes) {
  const TextSplitter split(data::kGpt4SplitPattern);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text(static_cast<std::size_t>(rng() % 64), '\0');
    for (char& c : text) c = static_cast<char>(rng());
    const Pieces pieces = split.pieces(text);
    EXPECT_EQ(joined(pieces), text);
    for (const auto p : pieces) EXPECT_FALSE(p.empty());
  }
}

TEST(TextSplit, LongRunsDoNotExhaustTheMatcher) {
  const TextSplitter split(data::kGpt2SplitPattern);
  const std::string spaces(1 << 20, ' ');
  EXPECT_EQ(split.pieces(spaces + "x"), (Pieces{std::string_view(spaces).substr(1), " x"}));
  const std::string letters(1 << 20, 'a');
  EXPECT_EQ(split.pieces(letters).size(), 1u);
  // GPT-4's \s*[\r\n]+ scans a run of spaces for a line break before \s+(?!\S) takes it: over 10 million spaces
  // that passed PCRE2's default limit of 10 million steps, and a valid text was refused.
  const TextSplitter gpt4(data::kGpt4SplitPattern);
  const std::string many(12'000'000, ' ');
  EXPECT_EQ(gpt4.pieces(many + "x"), (Pieces{std::string_view(many).substr(1), " x"}));
}

TEST(TextSplit, AnEmptyMatchStepsOverOneCharacter) {
  const TextSplitter split(R"(\p{L}*)");  // matches "" before every non-letter
  EXPECT_EQ(split.pieces("ab 12\xC3\xA9"), (Pieces{"ab", " 12", "\xC3\xA9"}));
}

TEST(TextSplit, ABadPatternIsNamedWithTheRegexEnginesReason) {
  // The reason is PCRE2's natively ("missing closing parenthesis") and JavaScript's in the WebAssembly build.
  EXPECT_THROW_MSG(TextSplitter("(ab"), std::invalid_argument, "split pattern '(ab' does not compile: ");
  EXPECT_THROW_MSG(TextSplitter("a\xFF"), std::invalid_argument, "does not compile: ");  // not UTF-8
}

TEST(TextSplit, CaselessContractionsMatchUnicodesCaseFoldingOfTheirLetters) {
  const TextSplitter split(data::kGpt4SplitPattern);
  // (?i:'s) matches LONG S (U+017F) as PCRE2 and Rust's regex fold it; a caseless 't has no such letter.
  EXPECT_EQ(split.pieces("it'\xC5\xBF it'T"), (Pieces{"it", "'\xC5\xBF", " it", "'T"}));
  EXPECT_EQ(split.pieces("x'\xC5\xBFt"), (Pieces{"x", "'\xC5\xBF", "t"}));
}

TEST(TextSplit, InvalidUtf8IsABarrierAndNotAnEndOfText) {
  // `$` and `^` are the text's ends only, not the edges of an invalid byte; lookahead sees nothing past one.
  const TextSplitter end(R"(\p{L}+$|\p{L})");
  EXPECT_EQ(end.pieces("ab\xFF" "cd"), (Pieces{"a", "b", "\xFF", "cd"}));
  const TextSplitter start(R"(^\p{L}+|\p{L})");
  EXPECT_EQ(start.pieces("ab\xFF" "cd"), (Pieces{"ab", "\xFF", "c", "d"}));
  const TextSplitter gpt2(data::kGpt2SplitPattern);
  EXPECT_EQ(gpt2.pieces("a  \xFF" "b"), (Pieces{"a", "  ", "\xFF", "b"}));  // \s+(?!\S) takes both spaces
}

// 60 KB of words, white space of every kind, caseless contractions and emoji, 15% of them replaced by 1-3 random bytes:
// mostly invalid UTF-8 between valid runs.
std::string mixed_bytes() {
  const char* words[] = {"the", "Hello", " world", "'s", "'S", "'\xC5\xBF", "\xE2\x84\xAA", "  ", "\n\n", "\r\n",
                         "123456", "\xC2\x85", "\xEF\xBB\xBF", "\xE1\xA0\x8E", "\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC",
                         "\xF0\x9F\x98\x80", "\t", " !!"};
  std::mt19937 rng(11);
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    if (rng() % 100 < 85) {
      text += words[rng() % std::size(words)];
    } else {
      for (std::uint32_t n = 1 + rng() % 3; n > 0; --n) text += static_cast<char>(rng() % 256);
    }
  }
  return text;
}

// The pieces' count and an FNV-1a hash of their lengths in order.
std::pair<std::size_t, std::uint64_t> digest(const Pieces& pieces) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const auto p : pieces) hash = (hash ^ p.size()) * 1099511628211ull;
  return {pieces.size(), hash};
}

TEST(TextSplit, MixedValidAndInvalidBytesSplitAsPcre2Does) {
  // The digests native PCRE2 gives: the WebAssembly build's JavaScript split runs this test too, so it must give the
  // same pieces, and a change of either engine's treatment of invalid UTF-8 shows here.
  const std::string text = mixed_bytes();
  ASSERT_EQ(text.size(), 59648u);
  EXPECT_EQ(digest(TextSplitter(data::kGpt2SplitPattern).pieces(text)),
            (std::pair<std::size_t, std::uint64_t>{20759, 0x103817c5cf91d31dull}));
  EXPECT_EQ(digest(TextSplitter(data::kGpt4SplitPattern).pieces(text)),
            (std::pair<std::size_t, std::uint64_t>{18177, 0xa9eac175183d3813ull}));
}

}  // namespace
}  // namespace cppgrad
