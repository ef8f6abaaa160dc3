#pragma once
// Small helpers shared by the tests, and the precompiled header of the test binary: keep op headers
// (core/ops/*.h, core/ops.h) out of it, or every test object rebuilds when an op is declared.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/gradcheck.h"
#include "core/tensor.h"
#include "test_paths.h"

namespace cppgrad::test {

// Float64 leaves requiring grad, the same helpers the gradcheck registry uses.
using checks::leaf;
using checks::leaf_away_from_zero;

// Same shape, and every element within tol (relative to the wanted value once it exceeds 1).
inline void expect_all_close(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = got.to_double_vector(), w = want.to_double_vector();
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * std::max(1.0, std::abs(w[i]))) << "element " << i;
}

}  // namespace cppgrad::test

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
