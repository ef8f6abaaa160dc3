#include "models/reverse/train_checks.h"

#include <fmt/format.h>

#include <stdexcept>

#include "models/reverse/trainer.h"

namespace cppgrad::reverse {

void check_train_run(const TrainConfig& config, const std::string& save, const std::string& resume, int processes,
                     bool read_resume) {
  if (read_resume && !resume.empty())
    if (const std::int64_t done = read_checkpoint_epoch(resume); config.epochs <= done)
      throw std::invalid_argument(fmt::format("--resume {}: the checkpoint has trained {} epochs already and --epochs "
                                              "is {}: nothing to do (give --epochs above {} to train further)",
                                              resume, done, config.epochs, done));
  if (processes != 0 && (config.arch == Arch::tutorial || config.shards == 1))
    throw std::invalid_argument(fmt::format("{} processes need the transformer's sharded step: --arch transformer and "
                                            "--shards a multiple of the processes, got --arch {} --shards {}",
                                            processes, choice_name(kArchs, config.arch), config.shards));
  if (config.arch == Arch::tutorial && (!save.empty() || !resume.empty()))
    throw std::invalid_argument("--save and --resume are not available with --arch tutorial");
}

}  // namespace cppgrad::reverse
