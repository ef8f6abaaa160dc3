#include "models/gpt/train_checks.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace cppgrad::gpt {

void check_resume_or_init(bool resume, bool init) {
  if (resume && init)
    throw std::invalid_argument("--init starts a new run from a checkpoint's weights, --resume continues one: give one "
                                "of them");
}

void check_default_data(const TrainConfig& config) {
  if (config.data == kDefaultData && !std::filesystem::exists(config.data))
    throw std::invalid_argument(fmt::format("the default data {} is missing: install Debian's word list (sudo apt-get "
                                            "install wamerican, or bash .ci/install-deps.sh), or give --data FILE",
                                            kDefaultData));
}

void check_steps_left(const TrainConfig& config, std::int64_t step, const std::string& resume) {
  if (!resume.empty() && step >= config.steps)
    throw std::invalid_argument(fmt::format("--resume {}: the checkpoint has trained {} steps already and --steps is "
                                            "{}: nothing to do (give --steps above {} to train further)", resume, step,
                                            config.steps, step));
}

}  // namespace cppgrad::gpt
