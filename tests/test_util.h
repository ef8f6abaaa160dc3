#pragma once
// Small helpers shared by the tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/generator.h"
#include "core/gradcheck.h"
#include "core/ops.h"

namespace cppgrad::test {

// A float64 leaf with values uniform in [lo, hi), requiring grad.
inline Tensor leaf(const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Generator gen(seed);
  Tensor t = add(mul(Tensor::rand(shape, gen, DType::Float64), hi - lo), lo);
  t.set_requires_grad(true);
  return t;
}

// Values whose magnitude is at least `gap` (away from the kinks of relu, max, ...).
inline Tensor leaf_away_from_zero(const Shape& shape, std::uint64_t seed, double gap = 0.1) {
  Generator gen(seed);
  Tensor t = Tensor::rand(shape, gen, DType::Float64);
  double* p = t.data<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = (p[i] < 0.5 ? -1.0 : 1.0) * (gap + p[i]);
  t.set_requires_grad(true);
  return t;
}

// The golden directory: $CPPGRAD_GOLDEN_DIR, else ../shared/golden next to the source tree.
inline std::string golden_dir() {
  if (const char* env = std::getenv("CPPGRAD_GOLDEN_DIR"); env && *env) return env;
  return CPPGRAD_DEFAULT_GOLDEN_DIR;
}

}  // namespace cppgrad::test

#define EXPECT_GRADCHECK(fn, inputs)                              \
  do {                                                            \
    const auto gc_result_ = ::cppgrad::gradcheck((fn), (inputs)); \
    EXPECT_TRUE(gc_result_.ok) << gc_result_.message;             \
  } while (0)

// Asserts that `stmt` throws an exception of `type` whose message contains `text`.
#define EXPECT_THROW_MSG(stmt, type, text)                                          \
  do {                                                                              \
    try {                                                                           \
      stmt;                                                                         \
      ADD_FAILURE() << "expected " #type " containing \"" << (text) << "\"";         \
    } catch (const type& e_) {                                                      \
      EXPECT_THAT(std::string(e_.what()), ::testing::HasSubstr(text));              \
    }                                                                               \
  } while (0)
