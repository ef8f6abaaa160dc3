// The split's step budget (data/text_split.cpp): each search sees a window of the text ahead, grown while a match
// may run past it. Held here against the plain loop it replaced (one search over the whole text, no window, no JIT),
// on random texts of long runs, the kind that cross many windows; and the patterns the budget exists for are refused.
// Native only (it calls PCRE2 itself): the WebAssembly build splits on JavaScript's regex.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "data/bpe.h"
#include "data/text_split.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::TextSplitter;

// The split as one search over the whole text at a time: the definition the windowed matcher must give.
std::vector<std::string> whole_text_pieces(const std::string& pattern, const std::string& text) {
  const std::string rewritten = data::with_unicode_white_space(pattern);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  const std::unique_ptr<pcre2_code, void (*)(pcre2_code*)> code(
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &error, &error_offset,
                    nullptr),
      pcre2_code_free);
  EXPECT_NE(code, nullptr) << pattern;
  const std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> match(
      pcre2_match_data_create_from_pattern(code.get(), nullptr), pcre2_match_data_free);
  std::vector<std::string> out;
  std::size_t gap_start = 0, offset = 0;
  while (offset < text.size()) {
    const int rc = pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), offset, 0,
                               match.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    EXPECT_GT(rc, 0) << "PCRE2 error " << rc;
    if (rc <= 0) break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match.get());
    if (ov[0] == ov[1]) {
      offset = ov[0] + 1;
      while (offset < text.size() && (static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80) ++offset;
      continue;
    }
    if (ov[0] > gap_start) out.push_back(text.substr(gap_start, ov[0] - gap_start));
    out.push_back(text.substr(ov[0], ov[1] - ov[0]));
    gap_start = offset = ov[1];
  }
  if (text.size() > gap_start) out.push_back(text.substr(gap_start));
  return out;
}

std::vector<std::string> windowed_pieces(const std::string& pattern, const std::string& text) {
  std::vector<std::string> out;
  for (const std::string_view p : TextSplitter(pattern).pieces(text)) out.emplace_back(p);
  return out;
}

// Runs of 1 to 300 repeats of one of these, so pieces and gaps cross the 64-byte first window and its doublings.
std::string random_runs(std::mt19937& rng, std::size_t runs) {
  static const std::vector<std::string> atoms = {"a", "Zz", "\xC3\xA9", "\xE5\xAD\x97", " ", "\n", "\r\n", "\t", "7",
                                                 "'s", "'S", "!", "?.", "\xC2\xA0", "\xC2\x85", "\xFF", "\x80", "x y"};
  std::uniform_int_distribution<std::size_t> atom(0, atoms.size() - 1), repeat(1, 300), coin(0, 3);
  std::string text;
  for (std::size_t r = 0; r < runs; ++r) {
    const std::string& a = atoms[atom(rng)];
    const std::size_t n = coin(rng) == 0 ? repeat(rng) : 1 + repeat(rng) % 4;
    for (std::size_t i = 0; i < n; ++i) text += a;
  }
  return text;
}

TEST(TextSplitWindow, PiecesEqualOneSearchOverTheWholeTextOnLongRuns) {
  // GPT-2's and GPT-4's patterns, and patterns whose matches hinge on what lies past a window's end: lookahead,
  // lookbehind, `$`, \b, a gap-only pattern whose misses span many windows, and an empty match.
  const std::vector<std::string> patterns = {std::string(data::kGpt2SplitPattern),
                                             std::string(data::kGpt4SplitPattern),
                                             "\\s+(?!\\S)|\\S+(?=\\s)|\\S+",
                                             "(?<=a)a+|Z+$|\\b\\w+\\b",
                                             "x",
                                             "a*"};
  std::mt19937 rng(40);
  for (int trial = 0; trial < 60; ++trial) {
    const std::string text = random_runs(rng, 40);
    for (const std::string& pattern : patterns)
      ASSERT_EQ(windowed_pieces(pattern, text), whole_text_pieces(pattern, text))
          << "pattern " << pattern << ", trial " << trial << ", " << text.size() << " bytes";
  }
}

TEST(TextSplitWindow, AMatchLongerThanEveryWindowIsOnePiece) {
  const std::string letters(100'000, 'q');
  const std::string spaces(100'000, ' ');
  const TextSplitter split(data::kGpt2SplitPattern);
  EXPECT_EQ(split.pieces(letters).size(), 1u);
  // \s+(?!\S): the run gives its last space to the word after it, which only the run's end can show
  EXPECT_EQ(split.pieces(spaces + "w"), (std::vector<std::string_view>{spaces.substr(1), " w"}));
}

// `a+b|.` over a run of letters scans to the run's end from each of its positions (quadratic: once 3-17 s for
// 100 KB); the match limit does not count a scan, the window budget does.
TEST(TextSplitWindow, APatternThatScansAheadAtEveryPositionIsRefusedByItsBudget) {
  const std::string text(1'000'000, 'a');
  for (const std::string pattern : {"a+b|.", "(?>a+)b|\\X|.", "(?=a*b)a|."})
    EXPECT_THROW_MSG(TextSplitter(pattern).pieces(text), std::runtime_error,
                     "split pattern '" + pattern + "': splitting 1000000 bytes took more than 129048576 steps");
}

TEST(TextSplitWindow, APatternThatBacktracksIsRefusedByItsBudget) {
  EXPECT_THROW_MSG(TextSplitter("(a|a)*b|.").pieces(std::string(40, 'a')), std::runtime_error,
                   "split pattern '(a|a)*b|.': splitting 40 bytes took more than 1053696 steps (by byte 0)");
}

// The catch: without the budget the scan is quadratic, so the same pattern on a short run (where the budget allows
// it) splits exactly as the whole-text search does.
TEST(TextSplitWindow, TheBudgetRefusesNothingASearchCanAfford) {
  std::string text(2'051, 'a');
  text[2'000] = 'b';  // 2,000 letters, b, 50 letters
  EXPECT_EQ(windowed_pieces("a+b|.", text), whole_text_pieces("a+b|.", text));
  EXPECT_EQ(windowed_pieces("a+b|.", text).size(), 51u);
}

}  // namespace
}  // namespace cppgrad
