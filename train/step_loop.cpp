#include "train/step_loop.h"

#include <algorithm>
#include <cstdio>

#include "train/diverged.h"
#include "train/stop.h"

namespace cppgrad::train {

StepLoop::StepLoop(std::int64_t step, std::int64_t steps, std::int64_t eval_every, bool quiet)
    : first_(step), steps_(steps), eval_every_(eval_every), quiet_(quiet), bar_(stdout, "step", steps) {
  catch_stop_signals();
}

bool StepLoop::next(std::int64_t step) {
  if (step < steps_ && !stop_requested()) return true;
  bar_.finish();
  return false;
}

bool StepLoop::stepped(std::int64_t step, double loss) {
  check_loss_finite(loss, /*epoch=*/0, step, steps_);  // a step-based run: the message names the step of the run
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start_;
  if (!quiet_) bar_.update(step, loss, static_cast<double>(step - first_) / std::max(seconds.count(), 1e-9));
  const bool due = step % eval_every_ == 0 || step == steps_;
  if (due) bar_.finish();
  return due;
}

}  // namespace cppgrad::train
