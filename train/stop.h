#pragma once
// Stopping is saving: Ctrl-C (SIGINT) or SIGTERM (a cluster's preemption) asks a run to stop at the next step
// boundary, where the program saves a checkpoint it can resume and exits with 128 + the signal (130, 143). A second
// signal ends the process at once, with 128 + that signal; a file being written through write_file_atomically is
// then left as it was (its temporary file is removed by the next write to that path).
//
//   train::catch_stop_signals();                        once, before the training loop
//   ... between two steps: if (train::stop_requested()) { save; print how to resume; return train::stop_status(); }
#include <cstdint>
#include <stdexcept>

namespace cppgrad::train {

// Installs the handler for SIGINT and SIGTERM. Until then a signal ends the process as the system's default does.
void catch_stop_signals();

bool stop_requested();
int stop_signal();         // the first signal caught (SIGINT, SIGTERM), 0 if none
int stop_status();         // 128 + stop_signal(): the shell's status for a process a signal ended
const char* stop_signal_name();  // "SIGINT", "SIGTERM"

// Thrown by a training loop that stopped between two steps because a stop was requested: `step` steps of `steps`
// in `epoch` were done (0: none of this epoch). The program catches it, saves, and exits with stop_status().
struct TrainingStopped : std::runtime_error {
  TrainingStopped(std::int64_t epoch, std::int64_t step, std::int64_t steps);
  std::int64_t epoch, step, steps;
};

}  // namespace cppgrad::train
