// train/stop.h: the first SIGINT or SIGTERM only asks to stop (the program goes on to its next step boundary); the
// second ends the process at once with 128 + that signal. Run in a child process (a death test): the handler is
// process-wide state.
#include "train/stop.h"

#include <unistd.h>

#include <csignal>

#include "test_util.h"

namespace cppgrad {
namespace {

TEST(StopDeathTest, TheFirstSignalAsksToStopAndTheSecondEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        train::catch_stop_signals();
        if (train::stop_requested()) ::_exit(1);
        std::raise(SIGTERM);  // asks to stop: the process goes on
        if (!train::stop_requested() || train::stop_signal() != SIGTERM || train::stop_status() != 143 ||
            std::string(train::stop_signal_name()) != "SIGTERM")
          ::_exit(2);
        std::raise(SIGINT);  // the second: ends the process at once, 128 + SIGINT
        ::_exit(3);
      },
      testing::ExitedWithCode(130), "second signal: stopped at once");
}

TEST(StopDeathTest, WithoutTheHandlerASignalEndsTheProcessAsUsual) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::raise(SIGTERM), testing::KilledBySignal(SIGTERM), "");
}

}  // namespace
}  // namespace cppgrad
