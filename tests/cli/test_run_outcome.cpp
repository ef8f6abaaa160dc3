// The run comparison of run_program.h, which the resume tests of cppgrad-reverse and cppgrad-gpt stand on: it drops
// only the timing keys, and expect_same fails on any other difference (a weight, a metrics line, a tensor's name).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "core/tensor.h"
#include "run_program.h"

namespace {

using cppgrad::test::expect_same;
using cppgrad::test::expect_same_weights;
using cppgrad::test::Outcome;

TEST(RunOutcome, ReadsEveryTensorAndDropsOnlyTheTimingKeys) {
  const auto dir = cppgrad::test::fresh_test_dir("cppgrad_run_outcome");
  const std::string checkpoint = (dir / "m.safetensors").string(), metrics = (dir / "m.jsonl").string();
  cppgrad::write_safetensors(checkpoint, {{"b", cppgrad::Tensor::from_vector<float>({0.5f}, {1})},
                                          {"w", cppgrad::Tensor::from_vector<float>({1.0f, -2.0f}, {2})}});
  std::ofstream(metrics) << R"({"step": 1, "loss": 2.5, "elapsed_s": 0.1})" "\n"
                         << R"({"step": 2, "loss": 2.0, "elapsed_s": 0.2, "epoch_s": 3})" "\n";
  const Outcome o = cppgrad::test::run_outcome(checkpoint, metrics, {"elapsed_s"});
  EXPECT_EQ(o.weights, (std::map<std::string, std::vector<double>>{{"b", {0.5}}, {"w", {1.0, -2.0}}}));
  EXPECT_EQ(o.metrics, (std::vector<std::string>{R"({"loss":2.5,"step":1})", R"({"epoch_s":3,"loss":2.0,"step":2})"}));
  std::filesystem::remove_all(dir);
}

// An outcome and copies of it that differ in one thing (functions: the fatal-failure checks take no locals).
Outcome run() { return {{{"w", {1.0, 2.0}}, {"b", {0.5}}}, {R"({"step":1})", R"({"step":2})"}}; }
Outcome renamed() { return {{{"w", {1.0, 2.0}}, {"c", {0.5}}}, run().metrics}; }
Outcome fewer() { return {{{"w", {1.0, 2.0}}}, run().metrics}; }

TEST(RunOutcome, ExpectSameCatchesEveryDifference) {
  expect_same(run(), run());
  EXPECT_NONFATAL_FAILURE(expect_same(run(), Outcome{{{"w", {1.0, 2.0000001}}, {"b", {0.5}}}, run().metrics}), "w");
  EXPECT_NONFATAL_FAILURE(expect_same(run(), Outcome{run().weights, {R"({"step":1})", R"({"step":3})"}}),
                          "a.metrics");
  EXPECT_NONFATAL_FAILURE(expect_same(run(), Outcome{run().weights, {R"({"step":1})"}}), "a.metrics");
  EXPECT_FATAL_FAILURE(expect_same_weights(run(), renamed()), "b is missing from the second checkpoint");
  EXPECT_FATAL_FAILURE(expect_same_weights(run(), fewer()), "a.weights.size()");
}

}  // namespace
