#pragma once
// std::source_location, which every op takes as its last argument (the call site named in an anomaly report, say).
// The standard library's where it has one; libc++ 14 (Debian's emscripten, the WebAssembly build: docs/browser.md)
// has no <source_location>, so there an equivalent is declared under the same name from the compiler builtins
// libc++ 15 builds its own on, so that the ops' signatures are the same in every build.
#if __has_include(<source_location>)
#include <source_location>
#endif

#if !defined(__cpp_lib_source_location)
#include <cstdint>

namespace std {

// The subset the library uses: current(), file_name(), function_name(), line(), column().
class source_location {
 public:
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           std::uint_least32_t line = __builtin_LINE(),
                                           std::uint_least32_t column = __builtin_COLUMN()) noexcept {
    source_location here;
    here.file_ = file;
    here.function_ = function;
    here.line_ = line;
    here.column_ = column;
    return here;
  }
  constexpr source_location() noexcept = default;
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr std::uint_least32_t column() const noexcept { return column_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  std::uint_least32_t line_ = 0;
  std::uint_least32_t column_ = 0;
};

}  // namespace std
#endif
