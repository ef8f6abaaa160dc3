// cppgrad-gradcheck on the command line: the registry's cases pass, a deliberately broken op is flagged with
// exit status 1, bad flags exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <sstream>
#include <string>

#include "cppgrad/version.h"
#include "run_program.h"

namespace {

using Result = cppgrad::test::ProgramResult;

Result gradcheck_cli(const std::string& args) { return cppgrad::test::run_program(CPPGRAD_GRADCHECK_BIN, args); }

// The table row whose case column starts with `name` ("broken BrokenSquare"), or "" when there is none.
std::string row_of(const std::string& out, const std::string& name) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(name + " ", 0) == 0) return line;
  return "";
}

// A failing row's worst-element column and its FAIL line must name the same Jacobian entry. first: the worst
// column reads "input I [E] / out [O]" and the FAIL line "input I [shape] at element [E], output element [O]";
// second order: "input I [E] / grad of input K [G]" and "... at element [E], gradient of input K at element [G]".
void expect_worst_is_the_failing_entry(const std::string& row) {
  static const std::regex first(R"(input (\d+) (\[[0-9, ]*\]) / out (\[[0-9, ]*\]))");
  static const std::regex second(R"(input (\d+) (\[[0-9, ]*\]) / grad of input (\d+) (\[[0-9, ]*\]))");
  std::smatch m;
  if (std::regex_search(row, m, second)) {
    EXPECT_THAT(row, ::testing::HasSubstr("FAIL: second-derivative Jacobian mismatch for input " + m[1].str()));
    EXPECT_THAT(row, ::testing::HasSubstr("at element " + m[2].str() + ", gradient of input " + m[3].str() +
                                          " at element " + m[4].str() + ":"));
  } else {
    ASSERT_TRUE(std::regex_search(row, m, first)) << row;
    EXPECT_THAT(row, ::testing::HasSubstr("FAIL: Jacobian mismatch for input " + m[1].str()));
    EXPECT_THAT(row, ::testing::HasSubstr("at element " + m[2].str() + ", output element " + m[3].str() + ":"));
  }
}

TEST(GradcheckCli, SelectedCasesPassAndPrintARowEach) {
  const Result r = gradcheck_cli("--only softmax,layer_norm");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("op Softmax "));
  EXPECT_THAT(r.out, ::testing::HasSubstr("module LayerNormModule"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("8 of 8 checks passed"));
}

TEST(GradcheckCli, ABrokenOpIsFlaggedAndFailsTheRun) {
  const Result r = gradcheck_cli("--only erf --include-broken");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("broken BrokenSquare"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("FAIL: Jacobian mismatch"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("1 of 2 checks passed"));
  expect_worst_is_the_failing_entry(row_of(r.out, "broken BrokenSquare"));
}

TEST(GradcheckCli, OrderTwoChecksSecondDerivativesAndCatchesABrokenDoubleBackward) {
  const Result r = gradcheck_cli("--order 2 --only tanh,layer_norm_module --include-broken");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("op Tanh "));
  EXPECT_THAT(r.out, ::testing::HasSubstr("broken BrokenCubeDoubleBackward"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("2 of 3 second-order checks passed"));
  EXPECT_EQ(gradcheck_cli("--order 3").status, 2);
  EXPECT_EQ(gradcheck_cli("--order 1,3").status, 2);
}

TEST(GradcheckCli, OrderTwoSaysItLeavesOutTheFirstDerivativeAndFailsAsASecondDerivative) {
  const Result r = gradcheck_cli("--order 2 --only tanh --include-broken");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("Second derivatives (gradgradcheck"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("This does not check the first derivative itself"));
  const std::string broken = row_of(r.out, "broken BrokenCubeDoubleBackward");
  EXPECT_THAT(broken, ::testing::HasSubstr("FAIL: second-derivative Jacobian mismatch"));
  expect_worst_is_the_failing_entry(broken);
  EXPECT_THAT(gradcheck_cli("--help").out, ::testing::HasSubstr("it does not check the gradients"));
}

TEST(GradcheckCli, OrderOneAndTwoRunsBothTables) {
  const Result r = gradcheck_cli("--order 1,2 --only tanh");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("First derivatives (gradcheck)"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("1 of 1 checks passed"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("1 of 1 second-order checks passed"));
  EXPECT_THAT(gradcheck_cli("--only tanh").out, ::testing::Not(::testing::HasSubstr("First derivatives")));
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
