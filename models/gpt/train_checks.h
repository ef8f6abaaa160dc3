#pragma once
// A `cppgrad-gpt train` run's refusals that no single flag can make (TrainConfig::validate checks each field,
// train/outputs.h each output path): each a std::invalid_argument of one line saying what to do instead.
#include <cstdint>
#include <string>

#include "models/gpt/config.h"

namespace cppgrad::gpt {

// --init starts a new run from a checkpoint's weights, --resume continues one: not both.
void check_resume_or_init(bool resume, bool init);

// The default data (Debian's word list) when the run reads it and it is not installed: how to install it, or --data.
void check_default_data(const TrainConfig& config);

// A run resumed from `resume` at `step` with nothing left to train (config.steps <= step): give a larger --steps.
void check_steps_left(const TrainConfig& config, std::int64_t step, const std::string& resume);

}  // namespace cppgrad::gpt
