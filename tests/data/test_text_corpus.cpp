// Text corpora: lines (CRLF, empty lines, the line number of a line too long, a seeded split that keeps every line
// exactly once) and running text (a contiguous split, splits too short to hold a window).
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "data/text_corpus.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::TextCorpusConfig;
using data::TextFormat;
using Ids = std::vector<std::int64_t>;
using Lines = std::vector<Ids>;

// n distinct words of lowercase letters, one per line, sorted like a word list.
std::string word_list(int n) {
  std::vector<std::string> words;
  for (int i = 0; i < n; ++i) words.push_back(std::string(1, static_cast<char>('a' + i % 26)) + std::string(1 + i / 26, 'q'));
  std::sort(words.begin(), words.end());
  std::string text;
  for (const auto& w : words) text += w + "\n";
  return text;
}

// The corpus's lines (std::bad_variant_access if it holds a running text) and its running text.
const data::Lines& lines_of(const data::TextCorpus& c) { return std::get<data::Lines>(c.splits); }
const data::RunningText& text_of(const data::TextCorpus& c) { return std::get<data::RunningText>(c.splits); }

Lines all_lines(const data::TextCorpus& c) {
  Lines all = lines_of(c).train;
  all.insert(all.end(), lines_of(c).val.begin(), lines_of(c).val.end());
  std::sort(all.begin(), all.end());
  return all;
}

TEST(TextFormat, ParsesAndPrintsItsNames) {
  EXPECT_EQ(data::parse_text_format("lines"), TextFormat::lines);
  EXPECT_EQ(data::parse_text_format("text"), TextFormat::text);
  EXPECT_EQ(data::parse_text_format("Lines"), std::nullopt);
  EXPECT_STREQ(data::to_string(TextFormat::text), "text");
}

TEST(LinesCorpus, DropsCarriageReturnsAndSkipsEmptyLines) {
  const auto c = data::make_text_corpus("ab\r\n\r\n\ncd\r\nef\n\n", {});
  EXPECT_TRUE(std::holds_alternative<data::Lines>(c.splits));
  EXPECT_EQ(c.tokenizer.chars()->vocab(), (std::vector<std::string>{"", "a", "b", "c", "d", "e", "f"}));  // no '\r', no '\n'
  EXPECT_EQ(all_lines(c), (Lines{{1, 2}, {3, 4}, {5, 6}}));
  EXPECT_EQ(lines_of(c).longest_line, 2);
  EXPECT_EQ(c.context, 3);  // the default: longest line + 1
}

TEST(LinesCorpus, ALineTooLongIsNamedByItsLineNumberInTheFile) {
  // Line 4 of the file (after an empty line 2) is the first with more than context - 1 = 3 characters; the shuffle
  // must not change which line is named.
  const std::string text = "abc\n\nab\nabcd\nabcde\n";
  for (const std::uint64_t seed : {0u, 1u, 2u})
    EXPECT_THROW_MSG(data::make_text_corpus(text, {.context = 4, .seed = seed}), std::invalid_argument,
                     "line 4 has 4 characters; --context 4 holds at most 3 (the model reads <b> and the characters)");
  EXPECT_EQ(data::make_text_corpus(text, {.context = 6}).context, 6);
  EXPECT_EQ(data::make_text_corpus(text, {}).context, 6);
}

TEST(LinesCorpus, TheSplitFollowsTheSeedAndKeepsEveryLineOnce) {
  const std::string text = word_list(100);
  const auto a = data::make_text_corpus(text, {.seed = 7}), b = data::make_text_corpus(text, {.seed = 7});
  const auto other = data::make_text_corpus(text, {.seed = 8});
  EXPECT_EQ(lines_of(a).val.size(), 10u);  // round(100 * 0.1)
  EXPECT_EQ(lines_of(a).train.size(), 90u);
  EXPECT_EQ(lines_of(a).val, lines_of(b).val);
  EXPECT_EQ(lines_of(a).train, lines_of(b).train);
  EXPECT_NE(lines_of(a).val, lines_of(other).val);
  // Every line exactly once, in one split: the sorted union is the sorted file, with no duplicates.
  Lines file;
  for (int i = 0; i < 100; ++i)
    file.push_back(a.tokenizer.chars()->encode(std::u32string(1, static_cast<char32_t>(U'a' + i % 26)) +
                                      std::u32string(static_cast<std::size_t>(1 + i / 26), U'q')));
  std::sort(file.begin(), file.end());
  EXPECT_EQ(all_lines(a), file);
  EXPECT_EQ(all_lines(other), file);
  // Shuffled, not taken from the end of the sorted list: the validation lines are not the last ten.
  Lines last(file.end() - 10, file.end()), val = lines_of(a).val;
  std::sort(val.begin(), val.end());
  EXPECT_NE(val, last);
}

TEST(LinesCorpus, EachSplitKeepsAtLeastOneLine) {
  EXPECT_EQ(lines_of(data::make_text_corpus("a\nb\n", {.val_fraction = 0.1})).val.size(), 1u);    // round(0.2) = 0 -> 1
  EXPECT_EQ(lines_of(data::make_text_corpus("a\nb\n", {.val_fraction = 0.9})).train.size(), 1u);  // round(1.8) = 2 -> 1
  EXPECT_THROW_MSG(data::make_text_corpus("only\n\n", {}), std::invalid_argument, "at least 2 non-empty lines");
}

TEST(LinesCorpus, RefusesAConfigOutOfRange) {
  EXPECT_THROW_MSG(data::make_text_corpus("a\nb\n", {.val_fraction = 0.0}), std::invalid_argument, "val_fraction must be in (0, 1)");
  EXPECT_THROW_MSG(data::make_text_corpus("a\nb\n", {.val_fraction = 1.0}), std::invalid_argument, "val_fraction");
  EXPECT_THROW_MSG(data::make_text_corpus("a\nb\n", {.context = -1}), std::invalid_argument, "context must be in");
  EXPECT_THROW_MSG(data::make_text_corpus("a\n\xC3(\n", {}), std::invalid_argument, "invalid UTF-8 at byte offset 2");
}

TEST(LinesCorpus, AFixedTokenizerGivesTheSameSplitAndNamesAForeignCharacter) {
  const std::string text = word_list(30);
  const auto fitted = data::make_text_corpus(text, {.seed = 3});
  const auto again = data::make_text_corpus(text, {.seed = 3}, fitted.tokenizer);
  EXPECT_EQ(lines_of(again).val, lines_of(fitted).val);
  EXPECT_EQ(lines_of(again).train, lines_of(fitted).train);
  EXPECT_THROW_MSG(data::make_text_corpus("aq\nbq\nxY\n", {}, fitted.tokenizer), std::invalid_argument,
                   "line 3: character 'Y' (U+0059) is not in the tokenizer's vocabulary");
  // val_fraction 0: everything is validation, and one line is enough.
  const auto all = data::make_text_corpus("aq\n", {.val_fraction = 0.0}, fitted.tokenizer);
  EXPECT_EQ(lines_of(all).val, (Lines{{*fitted.tokenizer.chars()->find(U'a'), *fitted.tokenizer.chars()->find(U'q')}}));
  EXPECT_TRUE(lines_of(all).train.empty());
  EXPECT_THROW_MSG(data::make_text_corpus("aq\nbq\n", {}, data::CharTokenizer::from_text(U"abq", false)),
                   std::invalid_argument, "lines mode needs a tokenizer whose id 0 is the boundary");
}

TEST(TextCorpus, SplitsTheStreamContiguously) {
  const std::string text = "abcdefghij\nklmnopqrs";  // 20 characters, '\n' one of them
  const auto c = data::make_text_corpus(text, {.format = TextFormat::text, .context = 3, .val_fraction = 0.2});
  EXPECT_TRUE(std::holds_alternative<data::RunningText>(c.splits));
  EXPECT_FALSE(c.tokenizer.chars()->has_boundary());
  EXPECT_EQ(c.tokenizer.size(), 20);
  EXPECT_EQ(c.tokenizer.chars()->decode(text_of(c).train), "abcdefghij\nklmno");  // 16 = 20 - round(20 * 0.2)
  EXPECT_EQ(c.tokenizer.chars()->decode(text_of(c).val), "pqrs");
  EXPECT_EQ(text_of(c).train.front(), 1);  // ids from 0, and '\n' (U+000A) sorts first
  EXPECT_EQ(c.tokenizer.chars()->find(U'\n'), 0);
  EXPECT_EQ(c.context, 3);
}

TEST(TextCorpus, EachSplitMustHoldMoreThanAContextOfTokens) {
  const std::string text = "abcdefghij";
  EXPECT_THROW_MSG(data::make_text_corpus(text, {.format = TextFormat::text, .context = 3, .val_fraction = 0.2}),
                   std::invalid_argument,
                   "the validation split has 2 of the 10 tokens (val_fraction 0.2); context 3 needs at least 4");
  EXPECT_THROW_MSG(data::make_text_corpus(text, {.format = TextFormat::text, .context = 3, .val_fraction = 0.7}),
                   std::invalid_argument, "the training split has 3 of the 10 tokens (val_fraction 0.7); context 3 needs at least 4");
  EXPECT_NO_THROW(data::make_text_corpus(text, {.format = TextFormat::text, .context = 3, .val_fraction = 0.4}));
  EXPECT_THROW_MSG(data::make_text_corpus(text, {.format = TextFormat::text}), std::invalid_argument,
                   "text mode needs a context");
}

TEST(TextCorpus, AFixedTokenizerCanTakeItAllAsValidation) {
  const auto tok = data::CharTokenizer::from_text(U"abc\n", false);
  const auto c = data::make_text_corpus("abc\ncab", {.format = TextFormat::text, .context = 6, .val_fraction = 0.0}, tok);
  EXPECT_TRUE(text_of(c).train.empty());
  EXPECT_EQ(text_of(c).val, (Ids{1, 2, 3, 0, 3, 1, 2}));
  EXPECT_THROW_MSG(data::make_text_corpus("abc\nabd", {.format = TextFormat::text, .context = 2, .val_fraction = 0.0}, tok),
                   std::invalid_argument, "line 2: character 'd' (U+0064)");
  EXPECT_THROW_MSG(data::make_text_corpus("abc", {.format = TextFormat::text, .context = 2},
                                          data::CharTokenizer::from_text(U"abc", true)),
                   std::invalid_argument, "text mode needs a tokenizer without the boundary");
}

}  // namespace
}  // namespace cppgrad
