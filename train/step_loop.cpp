#include "train/step_loop.h"

#include <algorithm>

#include "train/diverged.h"

namespace cppgrad::train {

bool StepLoop::next(std::int64_t step) {
  if (step >= std::min(o_.until, o_.steps)) return false;
  stopped_ = o_.stop && o_.stop();  // asked only when a step would follow: under mpirun, on every process alike
  return !stopped_;
}

bool StepLoop::stepped(std::int64_t step, double loss) const {
  check_loss_finite(loss, o_.epoch, step, o_.steps);
  return step % o_.eval_every == 0 || step == o_.steps;
}

}  // namespace cppgrad::train
