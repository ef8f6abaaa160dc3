#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "test_util.h"

namespace cppgrad::test {

// A random [B, L] int64 id tensor in [low, high).
inline Tensor random_ids(const Shape& shape, std::int64_t low, std::int64_t high, std::uint64_t seed) {
  Generator gen(seed);
  return Tensor::randint(low, high, shape, gen);
}

// The largest |a - b| over two tensors of one shape, in double.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const std::vector<double> x = a.to_double_vector(), y = b.to_double_vector();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

}  // namespace cppgrad::test
