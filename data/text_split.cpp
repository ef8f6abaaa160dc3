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
  code->jit = pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE) == 0;
  code_ = std::move(code);
}

void TextSplitter::for_each_piece(std::string_view text, const std::function<void(std::string_view)>& on_piece) const {
  const std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(code_->code, nullptr));
  if (!match) throw std::bad_alloc();
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> context;  // made only if the JIT's stack is too small
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> stack;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
  std::size_t gap_start = 0, offset = 0;  // text[gap_start, offset) is not matched yet
  while (offset < text.size()) {
    const auto match_at = code_->jit ? pcre2_jit_match : pcre2_match;
    const int rc = match_at(code_->code, subject, text.size(), offset, 0, match.get(), context.get());
    if ((rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_MATCHLIMIT) && !context) {
      // A long backtracking match (GPT-4's \s*[\r\n]+ over millions of spaces): retry with a bigger stack, and a
      // match limit that grows with the text still ahead (PCRE2's 10 million steps refused a valid 10 MB run of
      // spaces), so a call's work stays linear in what it can match.
      context.reset(pcre2_match_context_create(nullptr));
      stack.reset(pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr));
      if (!context || !stack) throw std::bad_alloc();
      pcre2_jit_stack_assign(context.get(), nullptr, stack.get());
      const std::uint64_t limit = 10'000'000 + 16 * std::uint64_t{text.size() - offset};
      pcre2_set_match_limit(context.get(), static_cast<std::uint32_t>(std::min<std::uint64_t>(limit, UINT32_MAX)));
      continue;
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0)
      throw std::runtime_error(fmt::format("split pattern '{}': matching at byte {} failed: {}", pattern_, offset,
                                           pcre2_message(rc)));
    const std::size_t start = ovector[0], end = ovector[1];
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
