#pragma once
// What the harnesses share: bug(), how a harness reports a broken promise (libFuzzer saves the input that led
// there), and bit-exact tensor comparison for the promises about what a load changes.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/tensor.h"
#include "nn/module.h"

namespace cppgrad::fuzz {

[[noreturn]] inline void bug(const std::string& what) {
  std::fprintf(stderr, "\nBUG: %s\n", what.c_str());
  std::abort();
}

// Same dtype, shape and bytes (NaNs compare by their bits).
inline bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  const std::size_t width = dtype_size(ca.dtype());
  const std::size_t n = static_cast<std::size_t>(ca.numel()) * width;
  const std::byte* pa = ca.impl().storage->data() + static_cast<std::size_t>(ca.offset()) * width;
  const std::byte* pb = cb.impl().storage->data() + static_cast<std::size_t>(cb.offset()) * width;
  return n == 0 || std::memcmp(pa, pb, n) == 0;
}

// A copy of every tensor's values (clones: the originals may be overwritten in place).
inline nn::StateDict snapshot(const nn::StateDict& state) {
  nn::StateDict copy;
  for (const auto& [name, t] : state) copy[name] = t.detach().clone();
  return copy;
}

inline bool same_bits(const nn::StateDict& a, const nn::StateDict& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || !same_bits(ia->second, ib->second)) return false;
  return true;
}

}  // namespace cppgrad::fuzz
