#pragma once
// JSON from a file that may be hostile, read within bounds, and its values shown in a message safely.
//
// A JSON text of a few megabytes can nest a million arrays (any recursive walk of it, as nlohmann's dump(), then
// overflows the stack) or hold millions of empty ones (a tree of them costs about 100 bytes each, 30 times the text).
// So a reader states what the value it expects may hold: how deep arrays and objects nest and how many values there
// are at most, and a SAX pass (nlohmann::json::sax_parse: no tree, no recursion) checks the text against them before
// any tree is built. A message never dumps a value from such a text: json_value_text shows it short.
//
//   const nlohmann::json j = parse_json_bounded(text, {.max_depth = 1, .max_values = 5}, "metadata 'dropout_rng'");
//   if (!j.is_array()) throw std::invalid_argument("... got " + json_value_text(j));
//
// For the JSON readers of the library and the programs, not a user's: it is not installed (nlohmann's JSON is the
// library's private dependency).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cppgrad {

// What a JSON value may hold.
struct JsonBounds {
  // Arrays and objects nested: a number or a string is 0, [1, 2] and {"a": 1} are 1, [[1]] and [{"a": 1}] are 2.
  std::size_t max_depth = 0;
  // Values in all, arrays and objects counted as one each besides what they hold (an object's keys are not counted):
  // 7 is 1, [] is 1, [1, [2]] is 4, {"a": 1, "b": [2]} is 4.
  std::size_t max_values = 1;
};

// The value of `text` (a whole JSON text, nothing after it but white space), its tree built only after the text was
// found within `bounds`. Throws std::invalid_argument that starts with `what` ("metadata 'config'"):
//   "<what> is not JSON: syntax error while parsing value - invalid literal; last read: 'x'" (cut short)
//   "<what> nests arrays and objects more than N deep"
//   "<what> holds more than N JSON values"
nlohmann::json parse_json_bounded(std::string_view text, const JsonBounds& bounds, const std::string& what);

// The same pass with a reader of one's own instead of a tree: each event of `text` goes to `reader` once the bounds
// allow it (a value past max_values or an array past max_depth is refused first, with the messages above). A reader
// that builds what it needs as it goes costs no tree at all; it may throw to refuse (its exception passes through
// unchanged). Its parse_error is never called: a syntax error is refused here, as above.
void sax_parse_bounded(std::string_view text, const JsonBounds& bounds, const std::string& what,
                       nlohmann::json_sax<nlohmann::json>& reader);

// A value as a message shows it, short whatever it holds, never a recursive walk: null, true, 12, 0.5, a string in
// quotes cut to its first 40 bytes (json_string_text), "an array of 3 values", "an empty array", "an object of 2 keys",
// "an empty object".
std::string json_value_text(const nlohmann::json& value);

// A string as a message shows it: in JSON's quotes and escapes (a newline is \n, so a message stays one line), cut at
// a character's end within its first `max_bytes` bytes, then "... (N bytes)"; bytes that are not UTF-8 shown as
// U+FFFD.
std::string json_string_text(std::string_view text, std::size_t max_bytes = 40);

}  // namespace cppgrad
