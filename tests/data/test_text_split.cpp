// The regex split (data/text_split.h): GPT-2's pattern on PCRE2, white space as tiktoken (Rust) means it, and
// invalid UTF-8 kept as pieces of its own so no byte is lost.
#include <string>
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
}

TEST(TextSplit, AnEmptyMatchStepsOverOneCharacter) {
  const TextSplitter split(R"(\p{L}*)");  // matches "" before every non-letter
  EXPECT_EQ(split.pieces("ab 12\xC3\xA9"), (Pieces{"ab", " 12", "\xC3\xA9"}));
}

TEST(TextSplit, ABadPatternIsNamedWithPcre2sReason) {
  EXPECT_THROW_MSG(TextSplitter("(ab"), std::invalid_argument, "split pattern '(ab' does not compile: missing closing");
}

}  // namespace
}  // namespace cppgrad
