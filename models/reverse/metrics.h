#pragma once
// The metrics of a run: the JSON Lines file of --metrics-out and the final summary.
//   per epoch: {"epoch", "loss", "train_token_acc", "test_seq_acc", "test_token_acc", "lr", "epoch_s"}
//   final:     {"event": "final", "test_seq_acc", "test_token_acc", "train_wall_s", "epochs", "params",
//               "best_test_seq_acc", "best_epoch", "epoch_99"}
// Accuracies are fractions in [0, 1].
#include <string>
#include <vector>

#include "models/reverse/trainer.h"

namespace cppgrad::reverse {

struct FinalSummary {
  double test_seq_acc = 0, test_token_acc = 0;  // of the last epoch
  double best_seq_acc = 0;
  std::int64_t best_epoch = 0;
  std::int64_t epoch_99 = 0;  // first epoch with test_seq_acc >= 0.99, 0 if none
  double train_wall_s = 0;    // sum of the epochs' wall times (evaluation included)
  std::int64_t epochs = 0;
  std::int64_t params = 0;
};

FinalSummary summarize(const std::vector<EpochMetrics>& history, std::int64_t params);

// One JSON object per line: every epoch, then the final object when `final` is given.
std::string metrics_jsonl(const std::vector<EpochMetrics>& history, const FinalSummary* final);

// The run's chart (train/plot/charts.h): the loss, and the teacher-forced training token accuracy beside the greedy
// test sequence and token accuracies, per epoch. Returns the SVG document.
std::string training_curves(const std::vector<EpochMetrics>& history, const std::string& title);

}  // namespace cppgrad::reverse
