#include "core/config_table.h"

#include <nlohmann/json.hpp>

#include "core/json_bounded.h"

namespace cppgrad {

using nlohmann::json;

std::string config_text(const ConfigValue& value) {
  return std::visit([](const auto& v) { return fmt::format("{}", v); }, value);
}

std::string config_json(const std::vector<std::pair<std::string, ConfigValue>>& fields) {
  json j = json::object();
  for (const auto& [key, value] : fields) std::visit([&, &k = key](const auto& v) { j[k] = v; }, value);
  return j.dump();
}

namespace {

// j as a value of kind `kind` (ConfigValue's index). nlohmann converts a float (1e30) into an integer with a plain
// cast, undefined out of range: an integer field must hold an integer that fits. A refusal shows the value short
// (json_value_text): it is the file's, and may be a string of megabytes.
ConfigValue read_value(const json& j, const std::string& what, const std::string& key, std::size_t kind) {
  const auto wrong_type = [&] {
    return std::invalid_argument(what + " '" + key + "' has the wrong type: " + json_value_text(j));
  };
  if (kind == 0 || kind == 1) {
    const bool fits = kind == 0 ? (j.is_number_unsigned() ? std::in_range<std::int64_t>(j.get<std::uint64_t>())
                                                          : j.is_number_integer())
                                : j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
    if (!fits) throw std::invalid_argument(what + " '" + key + "' must be an integer in range, got " + json_value_text(j));
    if (kind == 0) return j.get<std::int64_t>();
    return j.get<std::uint64_t>();
  }
  if (kind == 2) {
    if (!j.is_number()) throw wrong_type();
    return j.get<double>();
  }
  if (!j.is_string()) throw wrong_type();
  return j.get<std::string>();
}

}  // namespace

std::vector<std::optional<ConfigValue>> read_config_json(const std::string& text,
                                                         const std::vector<std::pair<std::string, std::size_t>>& keys,
                                                         bool only_these, const std::string& what) {
  // A flat object: a value of its own per key, no arrays or objects inside (depth 1).
  const json j = parse_json_bounded(text, {.max_depth = 1, .max_values = 1 + kMaxConfigKeys}, what);
  if (!j.is_object()) throw std::invalid_argument("malformed " + what + ": not a JSON object, " + json_value_text(j));
  if (only_these)
    for (const auto& [key, value] : j.items())
      if (std::none_of(keys.begin(), keys.end(), [&k = key](const auto& known) { return known.first == k; }))
        throw std::invalid_argument(what + " has the key " + json_string_text(key) + ", which this program does not "
                                    "know (a later version's, or another program's)");
  std::vector<std::optional<ConfigValue>> values;
  for (const auto& [key, kind] : keys)
    values.push_back(j.contains(key) ? std::optional<ConfigValue>(read_value(j.at(key), what, key, kind)) : std::nullopt);
  return values;
}

}  // namespace cppgrad
