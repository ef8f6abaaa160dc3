#pragma once
// Reading a program's config back from JSON (a checkpoint's metadata, which may be hostile): every key present and
// of its field's type, integers in range. Header-only, for the programs' config files.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace cppgrad::cli {

// j[key] into field, or std::invalid_argument naming the key. nlohmann converts a float (1e30) into an integer field
// with a plain cast, undefined behaviour out of range: an integer field must hold an integer that fits.
template <typename Field>
void read_json_field(const nlohmann::json& j, const char* key, Field& field) {
  if (!j.contains(key)) throw std::invalid_argument(std::string("config lacks '") + key + "'");
  const nlohmann::json& value = j.at(key);
  if constexpr (std::is_integral_v<Field>) {
    const bool fits = value.is_number_unsigned() ? std::in_range<Field>(value.get<std::uint64_t>())
                                                 : value.is_number_integer() && std::in_range<Field>(value.get<std::int64_t>());
    if (!fits) throw std::invalid_argument(std::string("config '") + key + "' must be an integer in range, got " + value.dump());
  }
  try {
    value.get_to(field);
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(std::string("config '") + key + "' has the wrong type: " + value.dump().substr(0, 40));
  }
}

}  // namespace cppgrad::cli
