// TextSplitter in the WebAssembly build (docs/browser.md), which has no PCRE2: the pattern runs on the JavaScript
// engine's Unicode regex (`new RegExp(p, 'gu')`, V8 in node and Chromium), rewritten by javascript_split_pattern
// (data/js_split_pattern.h) to PCRE2's meaning, and held equal to the native splitter by the same tests
// (tests/data/test_text_split.cpp, the BPE tests, tiktoken's ids).
//
// PCRE2_MATCH_INVALID_UTF treats invalid UTF-8 as a barrier no match crosses and no item matches; JavaScript's
// strings cannot hold such bytes. So the text is cut here into maximal valid UTF-8 runs, each run is decoded and
// matched alone (its ends are ends of the string to JavaScript, as an invalid byte is to PCRE2's lookahead; `^` and
// `$` are rewritten where the run's end is not the text's), and the invalid bytes between runs join the unmatched
// gaps. JavaScript gives UTF-16 offsets; they are mapped back to byte offsets while walking the run once.
#include <emscripten/emscripten.h>

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/js_split_pattern.h"
#include "data/text_split.h"
#include "data/utf8.h"

// The JavaScript side, at file scope (EM_JS declares extern "C" functions).
// Makes the RegExp; returns its handle (>= 0), or -1 with JavaScript's message in error[0, capacity).
// clang-format off
EM_JS(int, cppgrad_regexp_make, (const char* pattern, int length, char* error, int capacity), {
  let regexp;
  try {  // fatal: a pattern that is not UTF-8 is refused, as PCRE2 refuses it
    const source = new TextDecoder('utf-8', {fatal: true, ignoreBOM: true})
                       .decode(HEAPU8.subarray(pattern, pattern + length));
    regexp = new RegExp(source, 'gu');
  } catch (e) {
    stringToUTF8(String(e.message), error, capacity);
    return -1;
  }
  const table = Module.cppgradRegExps || (Module.cppgradRegExps = []);
  let handle = table.indexOf(null);
  if (handle < 0) handle = table.length;
  table[handle] = regexp;
  return handle;
});

EM_JS(void, cppgrad_regexp_free, (int handle), { Module.cppgradRegExps[handle] = null; });

// Matches the RegExp over text[0, length) (valid UTF-8) and writes each non-empty match's [start, end) byte offsets
// to out (2 uint32 each; room for length matches); returns how many. An empty match steps over one code point, as
// the native loop steps over one character.
EM_JS(int, cppgrad_regexp_matches, (int handle, const char* text, int length, uint32_t* out), {
  // ignoreBOM: a U+FEFF at the run's start is text, not a byte order mark to drop.
  const decoder = Module.cppgradUtf8 || (Module.cppgradUtf8 = new TextDecoder('utf-8', {ignoreBOM: true}));
  const s = decoder.decode(HEAPU8.subarray(text, text + length));
  const regexp = Module.cppgradRegExps[handle];
  regexp.lastIndex = 0;
  let count = 0, unit = 0, byte = 0;  // s[0, unit) is text[0, byte)
  const walk = (to) => {
    while (unit < to) {
      const c = s.charCodeAt(unit);
      if (c < 0x80) { byte += 1; unit += 1; }
      else if (c < 0x800) { byte += 2; unit += 1; }
      else if (c >= 0xD800 && c <= 0xDBFF) { byte += 4; unit += 2; }  // a surrogate pair: one 4-byte character
      else { byte += 3; unit += 1; }
    }
  };
  const base = out >> 2;
  let m;
  while ((m = regexp.exec(s)) !== null) {
    const size = m[0].length;
    if (size === 0) {
      regexp.lastIndex = m.index + (s.codePointAt(m.index) > 0xFFFF ? 2 : 1);
      continue;
    }
    walk(m.index);
    HEAPU32[base + 2 * count] = byte;
    walk(m.index + size);
    HEAPU32[base + 2 * count + 1] = byte;
    ++count;
  }
  return count;
});
// clang-format on

namespace cppgrad::data {

// The RegExps of the four places a run can have in the text (index: 2 * at_text_start + at_text_end); they are one
// RegExp where the pattern has no `^` or `$`.
struct TextSplitter::Code {
  std::array<int, 4> handles{-1, -1, -1, -1};
  ~Code() {
    for (std::size_t k = 0; k < handles.size(); ++k) {
      bool shared = false;
      for (std::size_t j = 0; j < k; ++j) shared = shared || handles[j] == handles[k];
      if (handles[k] >= 0 && !shared) cppgrad_regexp_free(handles[k]);
    }
  }
};

TextSplitter::TextSplitter(std::string_view pattern) : pattern_(pattern) {
  auto code = std::make_shared<Code>();
  std::array<std::string, 4> sources;
  for (int place = 0; place < 4; ++place) {
    sources[place] = javascript_split_pattern(pattern, RunPlace{.at_text_start = (place & 2) != 0,
                                                                .at_text_end = (place & 1) != 0});
    for (int earlier = 0; earlier < place; ++earlier)
      if (sources[earlier] == sources[place]) code->handles[place] = code->handles[earlier];
    if (code->handles[place] >= 0) continue;
    char error[512] = {};
    code->handles[place] =
        cppgrad_regexp_make(sources[place].data(), static_cast<int>(sources[place].size()), error, sizeof error);
    if (code->handles[place] < 0)
      throw std::invalid_argument(fmt::format("split pattern '{}' does not compile: {} (as JavaScript's '{}')",
                                              pattern_, error, sources[place]));
  }
  code_ = std::move(code);
}

void TextSplitter::for_each_piece(std::string_view text, const std::function<void(std::string_view)>& on_piece) const {
  std::vector<uint32_t> matches;
  std::size_t gap_start = 0, i = 0;  // text[gap_start, i) is not matched yet
  while (i < text.size()) {
    std::size_t run_end = i;  // text[i, run_end) is valid UTF-8
    for (std::size_t n; run_end < text.size() && (n = utf8_sequence_length(text, run_end)) > 0;) run_end += n;
    if (run_end == i) {  // an invalid byte: it joins the gap
      ++i;
      continue;
    }
    const std::size_t length = run_end - i;
    if (length > 0x7FFFFFFF)
      throw std::runtime_error(fmt::format("split pattern '{}': a valid UTF-8 run of {} bytes is more than the "
                                           "JavaScript splitter takes (2 GiB)", pattern_, length));
    matches.resize(2 * length);
    const int place = (i == 0 ? 2 : 0) + (run_end == text.size() ? 1 : 0);
    const int count = cppgrad_regexp_matches(code_->handles[place], text.data() + i, static_cast<int>(length),
                                             matches.data());
    for (int m = 0; m < count; ++m) {
      const std::size_t start = i + matches[2 * m], end = i + matches[2 * m + 1];
      if (start > gap_start) on_piece(text.substr(gap_start, start - gap_start));
      on_piece(text.substr(start, end - start));
      gap_start = end;
    }
    i = run_end;
  }
  if (text.size() > gap_start) on_piece(text.substr(gap_start));
}

}  // namespace cppgrad::data
