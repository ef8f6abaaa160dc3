// cppgrad-hvp on the command line: double backward agrees with finite differences on the reversal model, and
// bad flags exit 2 with one line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "run_program.h"

namespace {

using Result = cppgrad::test::ProgramResult;

Result hvp_cli(const std::string& args) { return cppgrad::test::run_program(CPPGRAD_HVP_BIN, args); }

TEST(HvpCli, DoubleBackwardAgreesWithFiniteDifferencesOnTheReversalModel) {
  const Result r = hvp_cli("--epochs 1 --batch 16");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("epoch 1: loss"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("curvature along the gradient"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("ok: double backward and the best finite difference agree"));
}

TEST(HvpCli, BadFlagsExitTwoWithOneLine) {
  for (const char* args : {"--epochs -1", "--batch 0", "--seed x", "--bogus"}) {
    const Result r = hvp_cli(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
  }
}

}  // namespace
