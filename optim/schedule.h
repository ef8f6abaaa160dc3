#pragma once
// Learning-rate schedules: the learning rate as a function of the step (0-based), set on the optimizer before
// each step.
#include <cstdint>
#include <string>

namespace cppgrad::optim {

struct Schedule {
  enum class Kind { Constant, Step, WarmupCosine };
  Kind kind = Kind::Constant;
  double base_lr = 1e-3;
  std::int64_t step_size = 1000;  // Step: multiply by gamma every step_size steps
  double gamma = 0.1;
  std::int64_t warmup_steps = 0;  // WarmupCosine: linear 0 -> base over warmup, then cosine down to min_lr
  std::int64_t total_steps = 1;
  double min_lr = 0.0;

  double lr_at(std::int64_t step) const;
};

Schedule::Kind parse_schedule_kind(const std::string& name);  // "constant" | "step" | "cosine"

}  // namespace cppgrad::optim
