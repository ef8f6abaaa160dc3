#include "optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace cppgrad::optim {

double Schedule::lr_at(std::int64_t step) const {
  switch (kind) {
    case Kind::Constant:
      return base_lr;
    case Kind::Step:
      return base_lr * std::pow(gamma, static_cast<double>(step / std::max<std::int64_t>(1, step_size)));
    case Kind::WarmupCosine: {
      if (step < warmup_steps) return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
      const double span = static_cast<double>(std::max<std::int64_t>(1, total_steps - warmup_steps));
      const double progress = std::min(1.0, static_cast<double>(step - warmup_steps) / span);
      return min_lr + 0.5 * (base_lr - min_lr) * (1 + std::cos(std::numbers::pi * progress));
    }
  }
  return base_lr;
}

Schedule::Kind parse_schedule_kind(const std::string& name) {
  if (name == "constant") return Schedule::Kind::Constant;
  if (name == "step") return Schedule::Kind::Step;
  if (name == "cosine") return Schedule::Kind::WarmupCosine;
  throw std::invalid_argument("schedule must be constant, step or cosine, got '" + name + "'");
}

}  // namespace cppgrad::optim
