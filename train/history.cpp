#include "train/history.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cppgrad::train {

using nlohmann::json;

namespace {

double field_value(const json& e, const HistoryField& f, bool non_negative, const std::string& where) {
  if (f.count) {
    if (!e.contains(f.key) || !e.at(f.key).is_number_unsigned() || e.at(f.key).get<std::uint64_t>() > (1ull << 53))
      throw std::invalid_argument(where + ": '" + f.key + "' must be a whole number");
    return static_cast<double>(e.at(f.key).get<std::uint64_t>());
  }
  if (!e.contains(f.key) || !e.at(f.key).is_number() || !std::isfinite(e.at(f.key).get<double>()) ||
      (non_negative && e.at(f.key).get<double>() < 0))
    throw std::invalid_argument(where + ": '" + f.key + "' must be a finite number" + (non_negative ? " >= 0" : ""));
  return e.at(f.key).get<double>();
}

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
                                               bool non_negative) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) throw std::invalid_argument("metadata 'history' is not a JSON array");
  std::vector<std::vector<double>> entries;
  for (const json& e : j) {
    const std::string where = fmt::format("history entry {}", entries.size() + 1);
    if (!e.is_object()) throw std::invalid_argument(where + " is not an object");
    std::vector<double> values;
    for (const HistoryField& f : fields) values.push_back(field_value(e, f, non_negative, where));
    entries.push_back(std::move(values));
  }
  return entries;
}

}  // namespace cppgrad::train
