#include "train/history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/json_bounded.h"

namespace cppgrad::train {

using nlohmann::json;

namespace {

// One field's value as an entry gave it: its kind as nlohmann's lexer read it, and the number.
struct RawValue {
  enum class Kind { missing, non_number, whole, negative_whole, real } kind = Kind::missing;
  std::uint64_t whole = 0;  // Kind::whole
  double number = 0;        // every number kind
};

double field_value(const RawValue& v, const HistoryField& f, bool non_negative, const std::string& where) {
  using Kind = RawValue::Kind;
  if (f.count) {
    if (v.kind != Kind::whole || v.whole > (1ull << 53))
      throw std::invalid_argument(where + ": '" + f.key + "' must be a whole number");
    return static_cast<double>(v.whole);
  }
  const bool number = v.kind == Kind::whole || v.kind == Kind::negative_whole || v.kind == Kind::real;
  if (!number || !std::isfinite(v.number) || (non_negative && v.number < 0))
    throw std::invalid_argument(where + ": '" + f.key + "' must be a finite number" + (non_negative ? " >= 0" : ""));
  return v.number;
}

// The history read as the parser goes, no JSON tree: each entry's fields kept as they come, checked when the entry
// closes. json_bounded's pass keeps entries flat (depth 2), so an entry holds no array or object of its own.
class HistoryReader final : public nlohmann::json_sax<json> {
 public:
  HistoryReader(const std::vector<HistoryField>& fields, bool non_negative, std::size_t max_entries)
      : fields_(fields), non_negative_(non_negative), max_entries_(max_entries) {}

  std::vector<std::vector<double>> entries;

  bool null() override { return scalar({}); }
  bool boolean(bool) override { return scalar({}); }
  bool number_integer(number_integer_t v) override {  // nlohmann's lexer gives negative integers only here
    return scalar({.kind = RawValue::Kind::negative_whole, .number = static_cast<double>(v)});
  }
  bool number_unsigned(number_unsigned_t v) override {
    return scalar({.kind = RawValue::Kind::whole, .whole = v, .number = static_cast<double>(v)});
  }
  bool number_float(number_float_t v, const string_t&) override {
    return scalar({.kind = RawValue::Kind::real, .number = v});
  }
  bool string(string_t&) override { return scalar({}); }
  bool binary(binary_t&) override { return scalar({}); }
  bool start_array(std::size_t) override {
    if (depth_ != 0) return scalar({});  // an entry that is an array (one inside an entry is refused before this)
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool start_object(std::size_t) override {
    if (depth_ != 1) return scalar({});
    if (entries.size() == max_entries_)
      throw std::invalid_argument(fmt::format("metadata 'history' holds more than {} entries", max_entries_));
    values_.assign(fields_.size(), RawValue{});
    ++depth_;
    return true;
  }
  bool key(string_t& k) override {
    field_ = static_cast<std::size_t>(
        std::find_if(fields_.begin(), fields_.end(), [&](const HistoryField& f) { return f.key == k; }) - fields_.begin());
    return true;
  }
  bool end_object() override {
    const std::string where = fmt::format("history entry {}", entries.size() + 1);
    std::vector<double> values;
    for (std::size_t i = 0; i < fields_.size(); ++i)
      values.push_back(field_value(values_[i], fields_[i], non_negative_, where));
    entries.push_back(std::move(values));
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool scalar(RawValue v) {
    if (depth_ == 0) throw std::invalid_argument("metadata 'history' is not a JSON array");
    if (depth_ == 1) throw std::invalid_argument(fmt::format("history entry {} is not an object", entries.size() + 1));
    if (v.kind == RawValue::Kind::missing) v.kind = RawValue::Kind::non_number;
    if (field_ < fields_.size()) values_[field_] = v;  // a repeated key: the last value, as a JSON tree keeps it
    return true;
  }

  const std::vector<HistoryField>& fields_;
  bool non_negative_;
  std::size_t max_entries_;
  std::size_t depth_ = 0;
  std::size_t field_ = 0;         // the field the last key names (fields_.size(): none)
  std::vector<RawValue> values_;  // the open entry's, by field
};

json entry_json(const std::vector<HistoryField>& fields, const std::vector<double>& entry) {
  if (entry.size() != fields.size())
    throw std::invalid_argument(fmt::format("history entry of {} values for {} fields", entry.size(), fields.size()));
  json e = json::object();
  for (std::size_t i = 0; i < fields.size(); ++i)
    e[fields[i].key] = fields[i].count ? json(static_cast<std::uint64_t>(entry[i])) : json(entry[i]);
  return e;
}

}  // namespace

std::string history_json(const std::vector<HistoryField>& fields, const std::vector<std::vector<double>>& entries) {
  json array = json::array();
  for (const std::vector<double>& entry : entries) array.push_back(entry_json(fields, entry));
  return array.dump();
}

std::string history_jsonl(const std::vector<HistoryField>& fields, const std::vector<std::vector<double>>& entries) {
  std::string lines;
  for (const std::vector<double>& entry : entries) lines += entry_json(fields, entry).dump() + "\n";
  return lines;
}

std::vector<std::vector<double>> parse_history(const std::string& text, const std::vector<HistoryField>& fields,
                                               bool non_negative, std::size_t max_entries) {
  HistoryReader reader(fields, non_negative, max_entries);
  // An array of flat objects; besides the fields, an entry may hold as many keys again (a later version's).
  const std::size_t per_entry = 1 + 2 * fields.size();
  const std::size_t most = max_entries > (SIZE_MAX - 1) / per_entry ? SIZE_MAX : 1 + max_entries * per_entry;
  sax_parse_bounded(text, {.max_depth = 2, .max_values = most}, "metadata 'history'", reader);
  return std::move(reader.entries);
}

}  // namespace cppgrad::train
