#pragma once
// Numbers read from text strictly: the whole text must be the number ("0.5abc", "5x", "" and " 5" are refused), and
// a flag's value refused names the flag. A command line's flags (train/flags.h) and a config table's rows
// (core/config_table.h) read their numbers so.
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

namespace cppgrad {

// The whole string as a number of type T, or nothing (no sign for unsigned T, no leading space or '+').
template <typename T>
std::optional<T> parse_number(const std::string& s) {
#if !defined(__cpp_lib_to_chars)
  // libc++ 14 (the WebAssembly build, docs/browser.md) has from_chars for integers only: a floating-point value is
  // read by strtod, after refusing what from_chars would refuse and strtod takes (leading space, '+', hexadecimal).
  if constexpr (std::is_floating_point_v<T>) {
    const std::size_t digits = !s.empty() && s[0] == '-' ? 1 : 0;
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])) || s[0] == '+' ||
        s.find_first_of("xX") != std::string::npos || (digits < s.size() && s[digits] == '+'))
      return std::nullopt;
    char* stop = nullptr;
    errno = 0;
    T value{};
    if constexpr (std::is_same_v<T, float>) value = std::strtof(s.c_str(), &stop);
    else value = static_cast<T>(std::strtod(s.c_str(), &stop));
    if (errno == ERANGE || stop != s.c_str() + s.size()) return std::nullopt;
    return value;
  } else
#endif
  {
    T value{};
    const char* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, value);
    if (ec != std::errc() || ptr != end || s.empty()) return std::nullopt;
    return value;
  }
}

inline std::optional<std::int64_t> parse_int(const std::string& s) { return parse_number<std::int64_t>(s); }

// A flag's value as a whole number, or std::invalid_argument "--<flag>: '<text>' is not a whole number".
inline std::int64_t int_flag(const std::string& flag, const std::string& text) {
  if (const auto v = parse_number<std::int64_t>(text)) return *v;
  throw std::invalid_argument("--" + flag + ": '" + text + "' is not a whole number" +
                              (text.find_first_not_of("0123456789-") == std::string::npos && !text.empty()
                                   ? " in range" : ""));
}

inline std::uint64_t uint_flag(const std::string& flag, const std::string& text) {
  if (const auto v = parse_number<std::uint64_t>(text)) return *v;
  throw std::invalid_argument("--" + flag + ": '" + text + "' is not a whole number from 0 to 2^64-1");
}

// A finite number ("1e-3", "0.5"); "nan", "inf" and trailing characters are refused.
inline double double_flag(const std::string& flag, const std::string& text) {
  const auto v = parse_number<double>(text);
  if (!v) throw std::invalid_argument("--" + flag + ": '" + text + "' is not a number");
  if (!std::isfinite(*v)) throw std::invalid_argument("--" + flag + ": must be a finite number, got '" + text + "'");
  return *v;
}

}  // namespace cppgrad
