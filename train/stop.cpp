#include "train/stop.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include <fmt/format.h>

namespace cppgrad::train {

namespace {

// The one piece of process-wide state in cppgrad: a signal handler cannot be handed an object, so what it records
// lives here. It is written by the handler alone (the first signal's number) and read at step boundaries; a lock-free
// atomic is safe to touch from a handler, whichever thread the signal lands on.
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

// Only async-signal-safe calls: the atomic exchange, write() and _exit().
extern "C" void on_stop_signal(int signal) {
  int none = 0;
  if (g_stop_signal.compare_exchange_strong(none, signal)) return;  // the first: stop at the next step boundary
  constexpr char kMessage[] = "\nsecond signal: stopped at once\n";
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  ::_exit(128 + signal);
}

}  // namespace

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a write interrupted by the first signal goes on
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() { return g_stop_signal.load() != 0; }
int stop_signal() { return g_stop_signal.load(); }
int stop_status() { return 128 + stop_signal(); }
const char* stop_signal_name() {
  switch (stop_signal()) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

TrainingStopped::TrainingStopped(std::int64_t epoch_, std::int64_t step_, std::int64_t steps_)
    : std::runtime_error(fmt::format("training stopped at epoch {}, step {} of {}", epoch_, step_, steps_)),
      epoch(epoch_),
      step(step_),
      steps(steps_) {}

}  // namespace cppgrad::train
