// GPT-2's split by Unicode category on two Debian libraries, to choose between them by a measurement: PCRE2 (what
// data/text_split.cpp uses: UTF-8 in place, JIT) and ICU's regex (libicu-dev: UTF-16, so the text is converted
// first, and that conversion is counted). Both run the same pattern with `\s` as Unicode's White_Space (tiktoken's
// meaning), and must cut the text into the same pieces: the program checks that before it prints a time.
//
//   bash bench/split/icu_vs_pcre2.sh FILE [REPEATS]     (builds this file, then runs it; needs libicu-dev)
//
// Prints, per library, the best of REPEATS runs in ms and MB/s, the number of pieces, and the Unicode version of
// its tables.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/regex.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "data/text_split.h"

namespace {

// GPT-2's pattern as tiktoken writes it (data/bpe.cpp: kGpt2SplitPattern), \s already as Unicode's White_Space.
const char* const kPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+)";

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The pieces' end offsets in UTF-16 code units, so the two libraries can be compared piece for piece.
std::vector<std::int64_t> pcre2_ends(const cppgrad::data::TextSplitter& split, const std::string& text) {
  std::vector<std::int64_t> ends;
  std::int64_t units = 0;
  split.for_each_piece(text, [&](std::string_view piece) {
    for (const unsigned char c : piece) units += (c & 0xC0) != 0x80 ? ((c >= 0xF0) ? 2 : 1) : 0;  // valid UTF-8 only
    ends.push_back(units);
  });
  return ends;
}

std::vector<std::int64_t> icu_ends(const icu::RegexPattern& pattern, const std::string& text) {
  const icu::UnicodeString u = icu::UnicodeString::fromUTF8(text);  // the conversion is part of ICU's cost
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> m(pattern.matcher(u, status));
  std::vector<std::int64_t> ends;
  std::int64_t covered = 0;
  while (m->find(status) && U_SUCCESS(status)) {
    const std::int64_t start = m->start(status), end = m->end(status);
    if (start > covered) ends.push_back(start);  // unmatched text between matches: a piece of its own
    ends.push_back(end);
    covered = end;
  }
  if (covered < u.length()) ends.push_back(u.length());
  return ends;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [REPEATS]\n", argv[0]);
    return 2;
  }
  std::ifstream f(argv[1], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const double mb = static_cast<double>(text.size()) / 1e6;

  const cppgrad::data::TextSplitter split(kPattern);
  UErrorCode status = U_ZERO_ERROR;
  UParseError parse_error;
  std::unique_ptr<icu::RegexPattern> icu_pattern(
      icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(kPattern), 0, parse_error, status));
  if (U_FAILURE(status)) {
    std::fprintf(stderr, "ICU does not compile the pattern: %s\n", u_errorName(status));
    return 1;
  }
  const std::vector<std::int64_t> a = pcre2_ends(split, text), b = icu_ends(*icu_pattern, text);
  if (a != b) {
    const auto at = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    std::fprintf(stderr, "the pieces differ: %zu from PCRE2, %zu from ICU, first at piece %td\n", a.size(), b.size(),
                 at.first - a.begin());
    return 1;
  }
  double best_pcre2 = 1e300, best_icu = 1e300;
  for (int r = 0; r < repeats; ++r) {  // interleaved, so that a busy moment falls on both
    double t0 = now_ms();
    std::size_t n = 0;
    split.for_each_piece(text, [&](std::string_view) { ++n; });
    best_pcre2 = std::min(best_pcre2, now_ms() - t0);
    t0 = now_ms();
    const std::size_t m = icu_ends(*icu_pattern, text).size();
    best_icu = std::min(best_icu, now_ms() - t0);
    if (n != a.size() || m != a.size()) return 1;
  }
  UVersionInfo unicode;
  u_getUnicodeVersion(unicode);
  std::printf("| library | best of %d | MB/s | pieces | Unicode |\n|---|---|---|---|---|\n", repeats);
  char pcre2_unicode[32] = "?";
  pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, pcre2_unicode);
  std::printf("| PCRE2 %d.%d, JIT, UTF-8 | %.1f ms | %.1f | %zu | %s |\n", PCRE2_MAJOR, PCRE2_MINOR, best_pcre2,
              mb / (best_pcre2 / 1e3), a.size(), pcre2_unicode);
  std::printf("| ICU %s regex, UTF-16 (conversion included) | %.1f ms | %.1f | %zu | %d.%d |\n", U_ICU_VERSION,
              best_icu, mb / (best_icu / 1e3), b.size(), unicode[0], unicode[1]);
  return 0;
}
