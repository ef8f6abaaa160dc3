// cppgrad-gradcheck on the command line: the registry's cases pass, a deliberately broken op is flagged with
// exit status 1, bad flags exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cppgrad/version.h"
#include "run_program.h"

namespace {

using Result = cppgrad::test::ProgramResult;

Result gradcheck_cli(const std::string& args) { return cppgrad::test::run_program(CPPGRAD_GRADCHECK_BIN, args); }

TEST(GradcheckCli, SelectedCasesPassAndPrintARowEach) {
  const Result r = gradcheck_cli("--only softmax,layer_norm");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("op Softmax "));
  EXPECT_THAT(r.out, ::testing::HasSubstr("module LayerNormModule"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("8 of 8 checks passed"));
}

TEST(GradcheckCli, ABrokenOpIsFlaggedAndFailsTheRun) {
  const Result r = gradcheck_cli("--only gelu --include-broken");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("broken BrokenSquare"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("FAIL: Jacobian mismatch"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("1 of 2 checks passed"));
}

TEST(GradcheckCli, OrderTwoChecksSecondDerivativesAndCatchesABrokenDoubleBackward) {
  const Result r = gradcheck_cli("--order 2 --only tanh,layer_norm_module --include-broken");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("op Tanh "));
  EXPECT_THAT(r.out, ::testing::HasSubstr("broken BrokenCubeDoubleBackward"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("2 of 3 second-order checks passed"));
  EXPECT_EQ(gradcheck_cli("--order 3").status, 2);
}

TEST(GradcheckCli, VersionIsTheProjectVersion) {
  const Result r = gradcheck_cli("--version");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, std::string("cppgrad-gradcheck ") + CPPGRAD_VERSION + "\n");
}

TEST(GradcheckCli, BadFlagsExitTwo) {
  EXPECT_EQ(gradcheck_cli("--bogus").status, 2);
  EXPECT_EQ(gradcheck_cli("--only no_such_op").status, 2);
  EXPECT_EQ(gradcheck_cli("--eps -1").status, 2);
  const Result junk = gradcheck_cli("--eps 1e-6abc");  // every number is read whole, and a refusal names the flag
  EXPECT_EQ(junk.status, 2);
  EXPECT_THAT(junk.out, ::testing::HasSubstr("--eps: '1e-6abc' is not a number"));
  EXPECT_THAT(gradcheck_cli("--seed 3x").out, ::testing::HasSubstr("--seed: '3x' is not a whole number"));
}

}  // namespace
