#pragma once
// Flag values of a command-line program, parsed strictly: the whole text must be the number ("0.5abc", "5x", ""
// and " 5" are refused), and a refusal names the flag; and what a program says of a --threads the machine cannot
// run at once. Header-only, so a program needs nothing else for it.
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace cppgrad::train {

// "1,2,4" -> {"1", "2", "4"} (empty items dropped).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

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

// The line a program prints once (on stderr) when --threads asks for more threads than the machine has cores
// (`cores`: std::thread::hardware_concurrency(), 0 when it is not known); empty when there is nothing to say. The
// run goes on: the results depend on the thread count alone, and the threads take turns on the cores.
inline std::string threads_note(std::int64_t threads, unsigned cores) {
  if (cores == 0 || threads <= static_cast<std::int64_t>(cores)) return "";
  const std::string n = std::to_string(threads), c = std::to_string(cores);
  return "note: --threads " + n + " is more than this machine's " + c + " cores; running anyway, the threads taking " +
         "turns on the cores (the results of " + n + " threads anywhere, but likely slower than --threads " + c + ")";
}

}  // namespace cppgrad::train
