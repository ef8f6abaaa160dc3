#pragma once
// A `train` run's settings checked together before it starts: what no flag can say of itself (TrainConfig::validate
// checks each field, train/outputs.h each output path). For cppgrad-reverse train, and for a test of its refusals.
#include <string>

#include "models/reverse/config.h"

namespace cppgrad::reverse {

// Throws std::invalid_argument with one line naming the flags, in this order, when
//   - `resume` (a checkpoint, or "") has trained config.epochs or more already: nothing to do (read only when
//     read_resume: on rank 0, the process that reads and writes the files);
//   - `processes` (the mpirun processes, 0 without mpirun) are asked of a run that has no sharded step (--arch
//     tutorial, or --shards 1);
//   - --arch tutorial is asked to --save or --resume (its trainer has no checkpoint).
void check_train_run(const TrainConfig& config, const std::string& save, const std::string& resume, int processes,
                     bool read_resume);

}  // namespace cppgrad::reverse
