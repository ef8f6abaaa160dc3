#pragma once
// The loop of a run that counts steps (not epochs), with what every such program does around its own step: a progress
// bar with the steps per second, Ctrl-C and SIGTERM answered between two steps (train/stop.h), the diverged-run guard
// (train/diverged.h), and an evaluation every `eval_every` steps and at the last. The program keeps its step, its
// evaluation and what it writes; the loop only says when.
//
//   train::StepLoop loop(run.step, config.steps, config.eval_every, quiet);
//   while (loop.next(run.step)) {
//     const double loss = train_step(run);                      // counts run.step: call it before stepped(),
//     if (!loop.stepped(run.step, loss)) continue;              // not in its arguments (their order is unspecified)
//     ... evaluate, print (loop.finish_bar() first), write the metrics, the plot, the checkpoint
//   }
//   if (train::stop_requested()) save, and return train::stop_status() (train::stopped_by_signal)
#include <chrono>
#include <cstdint>

#include "train/plot/progress_bar.h"

namespace cppgrad::train {

class StepLoop {
 public:
  // From `step` (0, or where a resumed run stands) to `steps`; the bar on stdout (drawn on a terminal only) unless
  // `quiet`. Installs the handler of Ctrl-C and SIGTERM (catch_stop_signals).
  StepLoop(std::int64_t step, std::int64_t steps, std::int64_t eval_every, bool quiet);
  // Before a step: whether to take it (false at `steps`, or when a stop was asked for: stop_requested() says which).
  bool next(std::int64_t step);
  // After a step, now `step`, of loss `loss`: TrainingDiverged when the loss is NaN or Inf, the bar redrawn, and
  // whether an evaluation is due (the bar is then cleared, so the evaluation's line takes its place).
  bool stepped(std::int64_t step, double loss);
  void finish_bar() { bar_.finish(); }

 private:
  std::int64_t first_, steps_, eval_every_;
  bool quiet_;
  ProgressBar bar_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace cppgrad::train
