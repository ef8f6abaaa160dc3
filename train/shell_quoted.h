#pragma once
// A path or value as the shell reads it back, for the command lines the programs and the browser page print.
#include <string>

namespace cppgrad::train {

// As it is when it is plain, else in single quotes (a quote inside as '\'').
inline std::string shell_quoted(const std::string& path) {
  constexpr const char* kPlain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:,@%";
  if (!path.empty() && path.find_first_not_of(kPlain) == std::string::npos) return path;
  std::string quoted = "'";
  for (const char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace cppgrad::train
