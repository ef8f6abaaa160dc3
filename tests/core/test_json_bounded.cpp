// core/json_bounded.h: JSON from a hostile file read within stated bounds, the bounds checked by a SAX pass before any
// tree is built, and values shown in messages short, never by a recursive dump (a value a million arrays deep once
// overflowed the stack of the message that quoted it).
#include "core/json_bounded.h"

#include <string>
#include <vector>

#include "test_util.h"

namespace cppgrad {
namespace {

using nlohmann::json;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonBounded, ParsesWhatIsWithinTheBounds) {
  EXPECT_EQ(parse_json_bounded("7", {.max_depth = 0, .max_values = 1}, "x"), json(7));
  EXPECT_EQ(parse_json_bounded(R"({"a": 1, "b": [2, 3]})", {.max_depth = 2, .max_values = 5}, "x"),
            json::parse(R"({"a": 1, "b": [2, 3]})"));
  EXPECT_EQ(parse_json_bounded(" [] ", {.max_depth = 1, .max_values = 1}, "x"), json::array());
}

// Each bound is exact: what it allows passes, one more is refused, naming the text and the bound.
TEST(JsonBounded, EachBoundIsExactAndNamedWhenExceeded) {
  EXPECT_NO_THROW(parse_json_bounded(nested(3), {.max_depth = 3, .max_values = 3}, "x"));
  EXPECT_THROW_MSG(parse_json_bounded(nested(4), {.max_depth = 3, .max_values = 100}, "metadata 'config'"),
                   std::invalid_argument, "metadata 'config' nests arrays and objects more than 3 deep");
  EXPECT_THROW_MSG(parse_json_bounded(R"({"a": {"b": 1}})", {.max_depth = 1, .max_values = 100}, "config"),
                   std::invalid_argument, "config nests arrays and objects more than 1 deep");
  EXPECT_NO_THROW(parse_json_bounded("[1, [2], {\"k\": 3}]", {.max_depth = 2, .max_values = 6}, "x"));
  EXPECT_THROW_MSG(parse_json_bounded("[1, [2], {\"k\": 3}]", {.max_depth = 2, .max_values = 5}, "the list"),
                   std::invalid_argument, "the list holds more than 5 JSON values");
  EXPECT_THROW_MSG(parse_json_bounded("1", {.max_depth = 0, .max_values = 0}, "x"), std::invalid_argument,
                   "x holds more than 0 JSON values");
  EXPECT_THROW_MSG(parse_json_bounded("[]", {.max_depth = 0, .max_values = 9}, "x"), std::invalid_argument,
                   "x nests arrays and objects more than 0 deep");
}

// The bounds are checked as the text is read, before any tree: a million levels or millions of empty arrays cost
// the text and no more, and the refusal comes at the first value past the bound.
TEST(JsonBounded, HostileTextsAreRefusedWithoutATree) {
  EXPECT_THROW_MSG(parse_json_bounded(nested(1'000'000), {.max_depth = 8, .max_values = 1'000'000}, "deep"),
                   std::invalid_argument, "deep nests arrays and objects more than 8 deep");
  std::string empties = "[";
  for (int i = 0; i < 2'000'000; ++i) empties += i == 0 ? "[]" : ",[]";
  empties += "]";
  EXPECT_THROW_MSG(parse_json_bounded(empties, {.max_depth = 2, .max_values = 1000}, "wide"), std::invalid_argument,
                   "wide holds more than 1000 JSON values");
}

// A syntax error names the text, without nlohmann's tag, and is cut short: the token it quotes may be megabytes.
TEST(JsonBounded, ASyntaxErrorIsOneShortLine) {
  EXPECT_THROW_MSG(parse_json_bounded("[1,", {.max_depth = 1, .max_values = 9}, "metadata 'x'"), std::invalid_argument,
                   "metadata 'x' is not JSON: parse error at line 1, column 4: syntax error while parsing value");
  EXPECT_THROW_MSG(parse_json_bounded("1e999", {.max_depth = 1, .max_values = 9}, "n"), std::invalid_argument,
                   "n is not JSON: number overflow parsing '1e999'");
  const std::string open_string = "\"" + std::string(5'000'000, 'a') + "\n";
  try {
    parse_json_bounded(open_string, {.max_depth = 1, .max_values = 9}, "s");
    ADD_FAILURE() << "an unterminated string was read";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, ::testing::StartsWith("s is not JSON: "));
    EXPECT_THAT(what, ::testing::Not(::testing::HasSubstr("[json.exception")));
    EXPECT_LT(what.size(), 200u);
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

// A reader of its own gets the events within the bounds; its refusals pass through unchanged.
TEST(JsonBounded, AReaderGetsTheEventsWithinTheBounds) {
  struct Numbers final : nlohmann::json_sax<json> {
    std::vector<std::uint64_t> seen;
    bool null() override { throw std::invalid_argument("no nulls here"); }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t v) override { return seen.push_back(v), true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool key(string_t&) override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  } reader;
  sax_parse_bounded("[1, 2, 3]", {.max_depth = 1, .max_values = 4}, "x", reader);
  EXPECT_EQ(reader.seen, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_THROW_MSG(sax_parse_bounded("[1, 2, 3, 4]", {.max_depth = 1, .max_values = 4}, "x", reader),
                   std::invalid_argument, "x holds more than 4 JSON values");
  EXPECT_THROW_MSG(sax_parse_bounded("[1, null]", {.max_depth = 1, .max_values = 4}, "x", reader),
                   std::invalid_argument, "no nulls here");
}

// A value in a message: short whatever it holds, one line, no recursion (a tree a million levels deep is shown as
// what its top is).
TEST(JsonBounded, ValuesAreShownShort) {
  EXPECT_EQ(json_value_text(json(nullptr)), "null");
  EXPECT_EQ(json_value_text(json(true)), "true");
  EXPECT_EQ(json_value_text(json(-12)), "-12");
  EXPECT_EQ(json_value_text(json(0.5)), "0.5");
  EXPECT_EQ(json_value_text(json("ab\ncd")), "\"ab\\ncd\"");
  EXPECT_EQ(json_value_text(json(std::string(10'000'000, 'A'))),
            "\"" + std::string(40, 'A') + "\"... (10000000 bytes)");
  EXPECT_EQ(json_value_text(json::array()), "an empty array");
  EXPECT_EQ(json_value_text(json::array({1})), "an array of 1 value");
  EXPECT_EQ(json_value_text(json::array({1, 2, 3})), "an array of 3 values");
  EXPECT_EQ(json_value_text(json::object()), "an empty object");
  EXPECT_EQ(json_value_text(json::parse(R"({"a": 1, "b": 2})")), "an object of 2 keys");
  EXPECT_EQ(json_value_text(json::parse(nested(1'000'000))), "an array of 1 value");
}

// A cut never splits a character, and bytes that are not UTF-8 are shown as U+FFFD: the message stays valid text.
TEST(JsonBounded, StringsAreCutAtACharactersEnd) {
  const std::string euros = std::string(39, 'x') + "\xE2\x82\xAC" + "yyy";  // the euro sign spans bytes 40..42
  EXPECT_EQ(json_string_text(euros), "\"" + std::string(39, 'x') + "\"... (45 bytes)");
  EXPECT_EQ(json_string_text("\xE2\x82\xAC"), "\"\\u20ac\"");
  EXPECT_EQ(json_string_text("a\xFF" "b"), "\"a\\ufffdb\"");
  EXPECT_EQ(json_string_text("abcdef", 3), "\"abc\"... (6 bytes)");
}

}  // namespace
}  // namespace cppgrad
