#include "data/text_split.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace cppgrad::data {

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return fmt::format("PCRE2 error {}", code);
  return reinterpret_cast<const char*>(buffer);
}

// RAII for the per-call PCRE2 objects.
struct MatchDataDeleter {
  void operator()(pcre2_match_data* p) const { pcre2_match_data_free(p); }
};
struct MatchContextDeleter {
  void operator()(pcre2_match_context* p) const { pcre2_match_context_free(p); }
};
struct JitStackDeleter {
  void operator()(pcre2_jit_stack* p) const { pcre2_jit_stack_free(p); }
};

// A continuation byte (10xxxxxx) never starts a character.
bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

struct TextSplitter::Code {
  pcre2_code* code = nullptr;
  bool jit = false;  // JIT-compiled: pcre2_jit_match skips pcre2_match's checks (KJV split: ~30% faster)
  ~Code() { pcre2_code_free(code); }
};

TextSplitter::TextSplitter(std::string_view pattern) : pattern_(pattern) {
  const std::string rewritten = with_unicode_white_space(pattern);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  auto code = std::make_shared<Code>();
  // UTF: the pattern and the text are UTF-8; UCP: \d, \w and [[:alpha:]] use Unicode properties too;
  // MATCH_INVALID_UTF: invalid UTF-8 in the text matches nothing instead of failing the whole match;
  // DOLLAR_ENDONLY: `$` is the end of the text, as in Rust's regex.
  code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                             PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &error,
                             &error_offset, nullptr);
  if (code->code == nullptr)
    throw std::invalid_argument(fmt::format("split pattern '{}' does not compile: {} (at offset {} of '{}')", pattern_,
                                            pcre2_message(error), error_offset, rewritten));
  // JIT makes matching several times faster; where PCRE2 was built without it, the interpreter gives the same matches.
  // Both modes: a window short of the text's end is matched with PCRE2_PARTIAL_HARD (see Matcher).
  code->jit = pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD) == 0;
  code_ = std::move(code);
}

namespace {

// The matcher's work, bounded: a pattern comes from a .model file anyone can write, and two kinds of pattern make a
// split slow however small the file. One backtracks (`(a|a)*b`: 2^n paths over n letters); PCRE2's match limit
// counts that. The other looks far ahead at every position (`a+b|.` over a run of letters scans to the run's end from
// each of its positions: quadratic in the run); the match limit does not count a scan. So each search is given only
// a window of the text ahead, 64 bytes at first: a match that would need more (PCRE2_PARTIAL_HARD reports it) is
// searched again in a window twice as long. The steps a split may take are the bytes of every window plus the match
// limits it exhausted, at most kBaseSteps + kStepsPerByte x the text's bytes; GPT-2's and GPT-4's patterns take
// under 20 a byte on English, and about 70 on text of one-character pieces. A match found inside its window is the
// match the whole text gives (hard partial matching stops at any path that reaches the window's end), so the pieces
// are exactly those of one search over the whole text.
constexpr std::size_t kFirstWindow = 64;
constexpr std::uint32_t kFirstMatchLimit = 4096;  // per search; doubled (and charged) each time it runs out
constexpr std::uint64_t kBaseSteps = 1 << 20, kStepsPerByte = 128;

class Matcher {
 public:
  Matcher(const pcre2_code* code, bool jit, std::string_view pattern, std::string_view text)
      : code_(code), jit_(jit), pattern_(pattern), text_(text),
        budget_(kBaseSteps + kStepsPerByte * std::uint64_t{text.size()}),
        match_(pcre2_match_data_create_from_pattern(code, nullptr)), context_(pcre2_match_context_create(nullptr)) {
    if (!match_ || !context_) throw std::bad_alloc();
  }

  struct Found {
    std::size_t start, end;  // the match, text[start, end); or, if !matched, where the search goes on
    bool matched;
  };
  // The first match starting at or after offset; or, when none starts before some `stop` (the text's end if none
  // starts at all), {stop, stop, false}: the text between is a gap.
  Found find(std::size_t offset) {
    std::size_t window = kFirstWindow;
    std::uint32_t limit = kFirstMatchLimit;
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text_.data());
    for (;;) {
      const std::size_t stop = window_end(offset, window);
      const bool whole = stop == text_.size();
      pcre2_set_match_limit(context_.get(), limit);
      const auto match_at = jit_ ? pcre2_jit_match : pcre2_match;
      const int rc = match_at(code_, subject, stop, offset, whole ? 0 : PCRE2_PARTIAL_HARD, match_.get(),
                              context_.get());
      if (rc == PCRE2_ERROR_PARTIAL) {  // the match may go on past the window
        spend(stop - offset, offset);
        window *= 2;
      } else if (rc == PCRE2_ERROR_MATCHLIMIT) {
        spend(limit, offset);
        limit = limit > UINT32_MAX / 2 ? UINT32_MAX : 2 * limit;
      } else if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !stack_) {  // a long backtracking match: a bigger stack, once
        stack_.reset(pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr));
        if (!stack_) throw std::bad_alloc();
        pcre2_jit_stack_assign(context_.get(), nullptr, stack_.get());
      } else if (rc == PCRE2_ERROR_NOMATCH) {
        spend(stop - offset, offset);
        return {stop, stop, false};
      } else if (rc < 0) {
        throw std::runtime_error(fmt::format("split pattern '{}': matching at byte {} failed: {}", pattern_, offset,
                                             pcre2_message(rc)));
      } else {
        spend(stop - offset, offset);
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_.get());
        return {ovector[0], ovector[1], true};
      }
    }
  }

 private:
  // offset + window, moved on to a character's first byte (a window never ends inside a character), at most the end.
  std::size_t window_end(std::size_t offset, std::size_t window) const {
    if (window >= text_.size() - offset) return text_.size();
    std::size_t stop = offset + window;
    while (stop < text_.size() && is_continuation(static_cast<unsigned char>(text_[stop]))) ++stop;
    return stop;
  }

  void spend(std::uint64_t steps, std::size_t offset) {
    spent_ += steps;
    if (spent_ > budget_)
      throw std::runtime_error(fmt::format(
          "split pattern '{}': splitting {} bytes took more than {} steps (by byte {}): the pattern backtracks or "
          "looks far ahead at every position, which GPT-2's and GPT-4's patterns do not",
          pattern_, text_.size(), budget_, offset));
  }

  const pcre2_code* code_;
  bool jit_;
  std::string_view pattern_, text_;
  std::uint64_t budget_, spent_ = 0;
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match_;
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> context_;
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> stack_;  // made only if the JIT's default stack is too small
};

}  // namespace

void TextSplitter::for_each_piece(std::string_view text, const std::function<void(std::string_view)>& on_piece) const {
  Matcher matcher(code_->code, code_->jit, pattern_, text);
  std::size_t gap_start = 0, offset = 0;  // text[gap_start, offset) is not matched yet
  while (offset < text.size()) {
    const auto [start, end, matched] = matcher.find(offset);
    if (!matched) {  // no match starts before `start`: the gap goes on
      offset = start;
      continue;
    }
    if (end == start) {  // an empty match: no piece; step over one character, which joins the gap
      offset = start + 1;
      while (offset < text.size() && is_continuation(static_cast<unsigned char>(text[offset]))) ++offset;
      continue;
    }
    if (start > gap_start) on_piece(text.substr(gap_start, start - gap_start));
    on_piece(text.substr(start, end - start));
    gap_start = offset = end;
  }
  if (text.size() > gap_start) on_piece(text.substr(gap_start));
}

}  // namespace cppgrad::data
