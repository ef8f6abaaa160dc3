#pragma once
// Small helpers shared by the tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "checks/gradcheck_cases.h"
#include "core/generator.h"
#include "core/gradcheck.h"
#include "core/ops.h"
#include "test_paths.h"

namespace cppgrad::test {

// Float64 leaves requiring grad, the same helpers the gradcheck registry uses.
using checks::leaf;
using checks::leaf_away_from_zero;

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
