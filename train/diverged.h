#pragma once
// The diverged-run guard: a run whose loss stopped being a finite number stops there, and nothing of that epoch is
// saved (the last checkpoint, from a good epoch, stays).
#include <cstdint>
#include <stdexcept>

namespace cppgrad::train {

// The message names where it happened and what to try (a smaller --lr, --clip-grad, --detect-anomaly).
struct TrainingDiverged : std::runtime_error {
  TrainingDiverged(std::int64_t epoch, std::int64_t step, std::int64_t steps, double loss);
  std::int64_t epoch, step;
};

// Throws TrainingDiverged when `loss` (of step `step` of `steps` in `epoch`) is NaN or infinite. A program that
// counts steps, not epochs (cppgrad-gpt), passes epoch 0: the message then names the step of the run, and says
// nothing since the latest evaluation (where it saves) was kept.
void check_loss_finite(double loss, std::int64_t epoch, std::int64_t step, std::int64_t steps);

}  // namespace cppgrad::train
