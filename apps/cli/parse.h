#pragma once
// Small helpers the command-line programs share for their flag values.
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace cppgrad::cli {

// "1,2,4" -> {"1", "2", "4"} (empty items dropped).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The whole string as an integer, or nothing.
inline std::optional<std::int64_t> parse_int(const std::string& s) {
  std::size_t used = 0;
  try {
    const std::int64_t v = std::stoll(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace cppgrad::cli
