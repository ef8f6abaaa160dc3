#pragma once
// A split pattern (data/text_split.h, PCRE2's syntax) rewritten for JavaScript's Unicode regex (`new RegExp(p, 'gu')`),
// which the WebAssembly build's splitter runs (data/text_split_js.cpp) on one valid UTF-8 run of the text at a time.
//
//   javascript_split_pattern(kGpt4SplitPattern, {.at_text_start = true, .at_text_end = true})
//     // "(?:'[sS\u017F]|'[tT]|...)|[^\r\n\p{L}\p{N}]?\p{L}+|...|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+"
//
// What it rewrites, so that JavaScript matches what PCRE2 (UTF, UCP, MATCH_INVALID_UTF, DOLLAR_ENDONLY) matches:
//   - `\s`, `\S` -> Unicode's White_Space property (with_unicode_white_space), as natively;
//   - `(?i:...)`: V8 before 12.5 (node 20) has no inline flags, so each ASCII letter inside becomes the class of
//     the letters Unicode's simple case folding makes equal to it, as PCRE2's caseless matching does: `s` ->
//     `[sS\u017F]` (LONG S), `k` -> `[kK\u212A]` (KELVIN SIGN), any other -> `[xX]` (an escape such as `\x41` is
//     copied as it is, and so stays case-sensitive);
//   - `^` and `$` outside classes: the run is the whole JavaScript string, but only the text's own start and end
//     are `^` and `$` to PCRE2 (invalid UTF-8 is a barrier, not an end), so in a run that does not start (end) the
//     text they become `(?!)`, which never matches.
// What it refuses, with std::invalid_argument naming the pattern and the reason: other inline flags (`(?i)`,
// `(?s:`, `(?-i:`...), `\Q...\E`, and inside `(?i:...)` a non-ASCII literal or a class range (no case table here).
// Anything else JavaScript does not accept is refused when the RegExp is made.
#include <string>
#include <string_view>

namespace cppgrad::data {

struct RunPlace {
  bool at_text_start = true;  // the run starts at byte 0 of the text
  bool at_text_end = true;    // the run ends at the text's last byte
};

std::string javascript_split_pattern(std::string_view pattern, RunPlace place);

}  // namespace cppgrad::data
