#pragma once
// std::bit_cast: the standard library's, or where it has none (libc++ 14, Debian's emscripten: the WebAssembly
// build, docs/browser.md) the same function on the compiler builtin that libstdc++ and later libc++ build theirs on.
#include <bit>

#if !defined(__cpp_lib_bit_cast)
#include <type_traits>

namespace std {

template <typename To, typename From>
  requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>)
constexpr To bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}

}  // namespace std
#endif
