// train/step_loop.h: a step-based run's loop says when to evaluate (every eval_every steps and at the last, from
// wherever a resumed run stands), stops at its steps, and stops a run whose loss is NaN or Inf.
#include "train/step_loop.h"

#include <cmath>

#include "test_util.h"
#include "train/diverged.h"

namespace cppgrad {
namespace {

std::vector<std::int64_t> evaluations(std::int64_t from, std::int64_t steps, std::int64_t every) {
  train::StepLoop loop(from, steps, every, /*quiet=*/true);
  std::vector<std::int64_t> due;
  for (std::int64_t step = from; loop.next(step);)
    if (loop.stepped(++step, 1.0)) due.push_back(step);
  return due;
}

TEST(StepLoop, EvaluatesEveryEvalEveryStepsAndAtTheLast) {
  EXPECT_EQ(evaluations(0, 7, 3), (std::vector<std::int64_t>{3, 6, 7}));
  EXPECT_EQ(evaluations(0, 6, 3), (std::vector<std::int64_t>{3, 6}));
  EXPECT_EQ(evaluations(4, 7, 3), (std::vector<std::int64_t>{6, 7}));  // resumed at 4: the same steps as unbroken
  EXPECT_TRUE(evaluations(7, 7, 3).empty());
}

TEST(StepLoop, StopsARunWhoseLossIsNotFinite) {
  train::StepLoop loop(0, 10, 5, /*quiet=*/true);
  EXPECT_THROW_MSG(loop.stepped(3, std::nan("")), train::TrainingDiverged, "step 3 of 10");
}

}  // namespace
}  // namespace cppgrad
