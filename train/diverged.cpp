#include "train/diverged.h"

#include <fmt/format.h>

#include <cmath>

namespace cppgrad::train {

TrainingDiverged::TrainingDiverged(std::int64_t epoch_, std::int64_t step_, std::int64_t steps, double loss)
    : std::runtime_error(fmt::format("training diverged: the loss is {} at {}step {} of {}; nothing of this {} was "
                                     "saved. Try a smaller --lr or --clip-grad 1; --detect-anomaly names the op that "
                                     "first made a NaN or Inf",
                                     loss, epoch_ > 0 ? fmt::format("epoch {}, ", epoch_) : "", step_, steps,
                                     epoch_ > 0 ? "epoch" : "evaluation interval")),
      epoch(epoch_),
      step(step_) {}

void check_loss_finite(double loss, std::int64_t epoch, std::int64_t step, std::int64_t steps) {
  if (!std::isfinite(loss)) throw TrainingDiverged(epoch, step, steps, loss);
}

}  // namespace cppgrad::train
