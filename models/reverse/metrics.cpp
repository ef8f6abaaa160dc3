#include "models/reverse/metrics.h"

#include <nlohmann/json.hpp>

#include "train/plot/charts.h"

namespace cppgrad::reverse {

FinalSummary summarize(const std::vector<EpochMetrics>& history, std::int64_t params) {
  FinalSummary s;
  s.params = params;
  s.epochs = static_cast<std::int64_t>(history.size());
  for (const auto& m : history) {
    s.train_wall_s += m.epoch_s;
    if (m.test_seq_acc > s.best_seq_acc || s.best_epoch == 0) s.best_seq_acc = m.test_seq_acc, s.best_epoch = m.epoch;
    if (s.epoch_99 == 0 && m.test_seq_acc >= 0.99) s.epoch_99 = m.epoch;
  }
  if (!history.empty()) s.test_seq_acc = history.back().test_seq_acc, s.test_token_acc = history.back().test_token_acc;
  return s;
}

std::string metrics_jsonl(const std::vector<EpochMetrics>& history, const FinalSummary* final) {
  std::string out;
  for (const auto& m : history)
    out += nlohmann::json{{"epoch", m.epoch}, {"loss", m.loss}, {"train_token_acc", m.train_token_acc},
                          {"test_seq_acc", m.test_seq_acc}, {"test_token_acc", m.test_token_acc}, {"lr", m.lr},
                          {"epoch_s", m.epoch_s}}.dump() + "\n";
  if (final)
    out += nlohmann::json{{"event", "final"}, {"test_seq_acc", final->test_seq_acc},
                          {"test_token_acc", final->test_token_acc}, {"train_wall_s", final->train_wall_s},
                          {"epochs", final->epochs}, {"params", final->params},
                          {"best_test_seq_acc", final->best_seq_acc}, {"best_epoch", final->best_epoch},
                          {"epoch_99", final->epoch_99}}.dump() + "\n";
  return out;
}

std::string training_curves(const std::vector<EpochMetrics>& history, const std::string& title) {
  std::vector<std::int64_t> epochs;
  std::vector<double> losses;
  std::vector<train::Curve> accuracies = {{"train token acc", {}}, {"test seq acc", {}}, {"test token acc", {}}};
  for (const auto& m : history) {
    epochs.push_back(m.epoch);
    losses.push_back(m.loss);
    accuracies[0].values.push_back(m.train_token_acc);
    accuracies[1].values.push_back(m.test_seq_acc);
    accuracies[2].values.push_back(m.test_token_acc);
  }
  return train::training_curves_svg(epochs, losses, accuracies, title);
}

}  // namespace cppgrad::reverse
