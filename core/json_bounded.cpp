#include "core/json_bounded.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/json_error_text.h"

namespace cppgrad {

using nlohmann::json;

namespace {

// nlohmann's message for a syntax error quotes the token it stopped in, which may be a string of megabytes.
constexpr std::size_t kMaxSyntaxErrorBytes = 160;

// The length of text's first `max_bytes` bytes, shortened so that it does not end inside a UTF-8 sequence.
std::size_t cut_at_character(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  std::size_t n = max_bytes;
  // Back over continuation bytes (10xxxxxx), at most 3: the sequence they belong to starts before the cut.
  for (int i = 0; i < 3 && n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80; ++i) --n;
  return n;
}

// Every event counted and checked against the bounds before it goes to the reader (none: the pre-pass of
// parse_json_bounded).
class BoundedSax final : public nlohmann::json_sax<json> {
 public:
  BoundedSax(const JsonBounds& bounds, const std::string& what, nlohmann::json_sax<json>* reader)
      : bounds_(bounds), what_(what), reader_(reader) {}

  bool null() override { return value() && (!reader_ || reader_->null()); }
  bool boolean(bool v) override { return value() && (!reader_ || reader_->boolean(v)); }
  bool number_integer(number_integer_t v) override { return value() && (!reader_ || reader_->number_integer(v)); }
  bool number_unsigned(number_unsigned_t v) override { return value() && (!reader_ || reader_->number_unsigned(v)); }
  bool number_float(number_float_t v, const string_t& s) override {
    return value() && (!reader_ || reader_->number_float(v, s));
  }
  bool string(string_t& s) override { return value() && (!reader_ || reader_->string(s)); }
  bool binary(binary_t& b) override { return value() && (!reader_ || reader_->binary(b)); }
  bool start_object(std::size_t n) override { return open() && (!reader_ || reader_->start_object(n)); }
  bool end_object() override { return close() && (!reader_ || reader_->end_object()); }
  bool start_array(std::size_t n) override { return open() && (!reader_ || reader_->start_array(n)); }
  bool end_array() override { return close() && (!reader_ || reader_->end_array()); }
  bool key(string_t& k) override { return !reader_ || reader_->key(k); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    const std::string message = json_error_text(e.what());
    const std::size_t n = cut_at_character(message, kMaxSyntaxErrorBytes);
    throw std::invalid_argument(fmt::format("{} is not JSON: {}{}", what_, message.substr(0, n),
                                            n < message.size() ? "..." : ""));
  }

 private:
  bool value() {
    if (++values_ > bounds_.max_values)
      throw std::invalid_argument(fmt::format("{} holds more than {} JSON values", what_, bounds_.max_values));
    return true;
  }
  bool open() {
    value();
    if (++depth_ > bounds_.max_depth)
      throw std::invalid_argument(fmt::format("{} nests arrays and objects more than {} deep", what_, bounds_.max_depth));
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }

  const JsonBounds& bounds_;
  const std::string& what_;
  nlohmann::json_sax<json>* reader_;
  std::size_t values_ = 0, depth_ = 0;
};

void run_bounded(std::string_view text, const JsonBounds& bounds, const std::string& what,
                 nlohmann::json_sax<json>* reader) {
  BoundedSax sax(bounds, what, reader);
  if (!json::sax_parse(text.begin(), text.end(), &sax))  // a refusal throws: false is a reader that said no
    throw std::logic_error("sax_parse_bounded: the reader of " + what + " stopped without saying why");
}

}  // namespace

json parse_json_bounded(std::string_view text, const JsonBounds& bounds, const std::string& what) {
  run_bounded(text, bounds, what, nullptr);
  return json::parse(text.begin(), text.end());  // the same parser: it accepts what the pass above accepted
}

void sax_parse_bounded(std::string_view text, const JsonBounds& bounds, const std::string& what,
                       nlohmann::json_sax<json>& reader) {
  run_bounded(text, bounds, what, &reader);
}

std::string json_string_text(std::string_view text, std::size_t max_bytes) {
  const std::size_t n = cut_at_character(text, max_bytes);
  const std::string quoted = json(std::string(text.substr(0, n))).dump(-1, ' ', /*ensure_ascii=*/true,
                                                                      json::error_handler_t::replace);
  return n < text.size() ? fmt::format("{}... ({} bytes)", quoted, text.size()) : quoted;
}

std::string json_value_text(const json& value) {
  const auto count = [](std::size_t n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  switch (value.type()) {
    case json::value_t::string: return json_string_text(value.get_ref<const std::string&>());
    case json::value_t::array:
      return value.empty() ? "an empty array" : "an array of " + count(value.size(), "value", "values");
    case json::value_t::object:
      return value.empty() ? "an empty object" : "an object of " + count(value.size(), "key", "keys");
    case json::value_t::binary: return "binary data of " + count(value.get_binary().size(), "byte", "bytes");
    case json::value_t::discarded: return "nothing";
    default: return value.dump();  // null, a boolean or a number: a few characters
  }
}

}  // namespace cppgrad
