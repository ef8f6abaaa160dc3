#pragma once
// The regex split that comes before byte-level BPE: text -> pieces, so that no token ever crosses a piece's edge
// (GPT-2 keeps "dog" and "dog." and "dog!" from becoming three unrelated tokens this way).
//
//   TextSplitter split(kGpt2SplitPattern);
//   split.pieces("Hello world!!")      // {"Hello", " world", "!!"}
//
// The pattern runs on PCRE2 with UTF and Unicode properties (\p{L} letters, \p{N} numbers), JIT-compiled, with
// tiktoken's semantics (its Rust regex engine) where PCRE2's would differ:
//   - `\s` and `\S` mean Unicode's White_Space property (Rust's meaning). PCRE2's own `\s` also matches U+180E
//     (MONGOLIAN VOWEL SEPARATOR, no longer white space since Unicode 6.3), so the pattern is compiled with
//     `\s` -> `\p{White_Space}` and `\S` -> `\P{White_Space}`. JavaScript's `\s` differs more (it lacks U+0085 NEXT
//     LINE and adds U+FEFF ZERO WIDTH NO-BREAK SPACE): a JavaScript tokenizer (npm gpt-3-encoder) splits such text
//     differently from tiktoken; this splitter follows tiktoken.
//   - `$` means the end of the text only (not also before a final newline).
// The WebAssembly build has no PCRE2: there the pattern runs on the JavaScript engine's regex (data/text_split_js.cpp,
// the pattern rewritten by data/js_split_pattern.h), to the same pieces (the same tests run on both).
// Any bytes are accepted, invalid UTF-8 included: PCRE2_MATCH_INVALID_UTF makes an invalid sequence match nothing,
// so it falls between matches. Every maximal run of bytes the pattern does not match becomes a piece of its own:
// the pieces always cover the text exactly, so encode -> decode gives back every byte.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cppgrad::data {

class TextSplitter {
 public:
  // Compiles the pattern. std::invalid_argument naming the pattern and the regex engine's message (PCRE2's, with the
  // offset) when it does not compile.
  explicit TextSplitter(std::string_view pattern);

  const std::string& pattern() const { return pattern_; }  // as given (before the \s rewrite)

  // Calls on_piece(piece) for each piece in order; the pieces are views into text, non-empty, and concatenated
  // they are text. std::runtime_error if PCRE2 gives up (its match or depth limit: a pathological pattern).
  void for_each_piece(std::string_view text, const std::function<void(std::string_view)>& on_piece) const;
  std::vector<std::string_view> pieces(std::string_view text) const;

 private:
  struct Code;                        // the compiled pattern (RAII over pcre2_code)
  std::string pattern_;
  std::shared_ptr<const Code> code_;  // immutable once compiled, so copies share it and threads may match at once
};

// The pattern with `\s` and `\S` (outside and inside [...] classes) rewritten to Unicode's White_Space property,
// for PCRE2. Exposed for its test.
std::string with_unicode_white_space(std::string_view pattern);

}  // namespace cppgrad::data
