#pragma once
// The lines cppgrad-reverse prints about a run, built from its numbers: one place for their format (tests/cli read
// them, a person compares them across runs), which a test can check without running the program.
#include <cstdint>
#include <string>
#include <vector>

#include "models/reverse/config.h"
#include "models/reverse/metrics.h"
#include "models/reverse/sweep.h"
#include "models/reverse/trainer.h"
#include "models/reverse/tutorial.h"

namespace cppgrad::reverse {

// A fraction as a percentage with one decimal: 0.5 -> "50.0%".
std::string percent(double fraction);

// "cppgrad-reverse: reverse 8-token sequences of tokens 1..9 (5000 train, 500 test, seed 42), 2 threads" (with
// variable lengths "2..8-token"); no newline.
std::string run_description(const TrainConfig& config, int threads);

// Where a resumed run goes on: "resumed in epoch 3 after step 40 of 79 from PATH\n" (a checkpoint saved mid-epoch),
// "resumed after epoch 2 from PATH\n", or "" for a fresh run.
std::string resumed_line(const Trainer& trainer, const std::string& resume);

// An epoch of the transformer: loss, accuracies, learning rate, time, and a sparkline of the step gradient norms
// (at most 20 points); ends with '\n'.
std::string epoch_line(const EpochMetrics& m, std::int64_t epochs, const std::vector<double>& grad_norms);
// The run's last two lines: accuracies and epochs (best, first >= 99%), then the time (steps_run in session_s
// seconds of this process); end with '\n'.
std::string final_lines(const FinalSummary& final, double session_s, std::int64_t steps_run);

// --arch tutorial: what the run shows (three lines), an epoch's line (the tutorial's accuracy beside the honest one),
// and the closing lines that name the gap between them; each ends with '\n'.
std::string tutorial_intro();
std::string tutorial_epoch_line(const TutorialEpoch& e, std::int64_t epoch, std::int64_t epochs);
std::string tutorial_final_lines(const TutorialEpoch& last);

// eval's first line: a checkpoint's greedy accuracy on `sequences` fresh test sequences drawn from `seed`.
std::string eval_line(const std::string& checkpoint, std::int64_t epochs, std::int64_t sequences, std::uint64_t seed,
                      const Accuracy& accuracy);

// The sweep's table: its header, and a row per setting; end with '\n'.
std::string sweep_header();
std::string sweep_row(const TrainConfig& config, const SettingResult& result);

}  // namespace cppgrad::reverse
