#pragma once
#include "test_util.h"

namespace cppgrad::test {

// A random [B, L] int64 id tensor in [low, high).
inline Tensor random_ids(const Shape& shape, std::int64_t low, std::int64_t high, std::uint64_t seed) {
  Generator gen(seed);
  return Tensor::randint(low, high, shape, gen);
}

}  // namespace cppgrad::test
