#pragma once
// A sweep: one run per combination of head counts and cross-attention kinds, each trained to its end, compared by
// `cppgrad-reverse sweep` (a table and the loss curves) and reusable by a test or a page that compares settings.
#include <cstdio>
#include <string>
#include <vector>

#include "models/reverse/config.h"
#include "models/reverse/metrics.h"
#include "models/reverse/trainer.h"
#include "train/plot/charts.h"

namespace cppgrad::reverse {

// heads: "1,2,4,8"; attentions: "scaled_dot,additive" (nn::kCrossAttentionChoices' names). One config per (head count, kind), heads
// outer, each `base` with those two fields, validated. Throws std::invalid_argument with a one-line reason: a head
// count that is not a number, an unknown kind, empty lists, or a setting validate() refuses (naming the setting).
std::vector<TrainConfig> sweep_runs(const std::string& heads, const std::string& attentions, const TrainConfig& base);

// What one setting came to.
struct SettingResult {
  FinalSummary summary;
  double final_loss = 0;  // the last epoch's mean training loss
  train::Curve curve;     // "heads=H <kind>": the loss per epoch
};

// Trains one setting to its end. On a terminal `progress` (stdout for a program, nullptr for none) shows a bar over the
// run's steps, labelled "<label> heads=H <kind>", where the setting's row will be printed (train/plot/progress_bar.h).
SettingResult train_setting(const TrainConfig& config, std::FILE* progress = nullptr, const std::string& label = "");

}  // namespace cppgrad::reverse
