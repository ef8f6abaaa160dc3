// train/step_loop.h: the loop every trainer runs says when to evaluate (every eval_every steps and at the last, from
// wherever a resumed run stands), stops at its steps or at a chunk's end, stops when the caller's check says so, and
// stops a run whose loss is NaN or Inf.
#include "train/step_loop.h"

#include <cmath>

#include "test_util.h"
#include "train/diverged.h"

namespace cppgrad {
namespace {

// The steps after which an evaluation is due, from `from` steps done.
std::vector<std::int64_t> evaluations(std::int64_t from, train::StepLoopOptions options) {
  train::StepLoop loop(std::move(options));
  std::vector<std::int64_t> due;
  for (std::int64_t step = from; loop.next(step);)
    if (loop.stepped(++step, 1.0)) due.push_back(step);
  return due;
}

TEST(StepLoop, EvaluatesEveryEvalEveryStepsAndAtTheLast) {
  EXPECT_EQ(evaluations(0, {.steps = 7, .eval_every = 3}), (std::vector<std::int64_t>{3, 6, 7}));
  EXPECT_EQ(evaluations(0, {.steps = 6, .eval_every = 3}), (std::vector<std::int64_t>{3, 6}));
  EXPECT_EQ(evaluations(4, {.steps = 7, .eval_every = 3}), (std::vector<std::int64_t>{6, 7}));  // resumed at 4
  EXPECT_TRUE(evaluations(7, {.steps = 7, .eval_every = 3}).empty());
}

TEST(StepLoop, AChunkEndsAtUntilAndTheRunStillEvaluatesAtItsSteps) {
  EXPECT_EQ(evaluations(0, {.steps = 7, .eval_every = 3, .until = 5}), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(evaluations(5, {.steps = 7, .eval_every = 3, .until = 10}), (std::vector<std::int64_t>{6, 7}));
}

TEST(StepLoop, StopsWhenTheCallersCheckSaysSoAndAsksOnlyBeforeAStep) {
  int asked = 0;
  train::StepLoop loop({.steps = 3, .eval_every = 1, .stop = [&] { return ++asked == 3; }});
  std::int64_t step = 0;
  while (loop.next(step)) loop.stepped(++step, 1.0);
  EXPECT_TRUE(loop.stopped());
  EXPECT_EQ(step, 2);
  EXPECT_EQ(asked, 3);
  train::StepLoop to_the_end({.steps = 2, .eval_every = 1, .stop = [&] { return ++asked > 100; }});
  for (step = 0; to_the_end.next(step);) to_the_end.stepped(++step, 1.0);
  EXPECT_FALSE(to_the_end.stopped());
  EXPECT_EQ(asked, 5);  // twice: never at the last step's end, where no step follows (a collective under mpirun)
}

TEST(StepLoop, StopsARunWhoseLossIsNotFinite) {
  const train::StepLoop loop({.steps = 10, .eval_every = 5});
  EXPECT_THROW_MSG(loop.stepped(3, std::nan("")), train::TrainingDiverged, "step 3 of 10");
  const train::StepLoop epoch({.steps = 10, .eval_every = 10, .epoch = 2});
  EXPECT_THROW_MSG(epoch.stepped(4, INFINITY), train::TrainingDiverged, "epoch 2, step 4 of 10");
}

}  // namespace
}  // namespace cppgrad
