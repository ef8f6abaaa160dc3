#include "models/gpt/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "train/history.h"
#include "train/plot/charts.h"

namespace cppgrad::gpt {

using nlohmann::json;

namespace {

// The metrics stream's line; a checkpoint's history entry without val_bpb.
json to_json(const Evaluation& e, bool with_bpb) {
  json j = {{"step", e.step}, {"train_loss", e.train_loss}, {"val_loss", e.val_loss}};
  if (with_bpb) j["val_bpb"] = e.val_bpb;
  j.update({{"lr", e.lr}, {"tokens_per_s", e.tokens_per_s}, {"elapsed_s", e.elapsed_s}});
  return j;
}

}  // namespace

std::string evaluation_json(const Evaluation& e) { return to_json(e, /*with_bpb=*/true).dump(); }

std::string metrics_jsonl(const std::vector<Evaluation>& history, const FinalSummary* final) {
  std::string out;
  for (const Evaluation& e : history) out += evaluation_json(e) + "\n";
  if (final)
    out += json{{"event", "final"}, {"val_loss", final->val_loss}, {"val_bpb", final->val_bpb},
                {"bigram_val_loss", final->bigram_val_loss},
                {"steps", final->steps}, {"params", final->params}, {"train_wall_s", final->train_wall_s}}.dump() + "\n";
  return out;
}

std::string history_json(const std::vector<Evaluation>& history) {
  json arr = json::array();
  for (const Evaluation& e : history) arr.push_back(to_json(e, /*with_bpb=*/false));
  return arr.dump();
}

std::vector<Evaluation> parse_history(const std::string& text, std::int64_t step) {
  // Each entry's step grows and none is past `step`: at most step + 1 entries.
  const auto entries = train::parse_history(text, {{"step", /*count=*/true}, {"train_loss"}, {"val_loss"}, {"lr"},
                                                   {"tokens_per_s"}, {"elapsed_s"}}, /*non_negative=*/true,
                                            static_cast<std::size_t>(std::max<std::int64_t>(step, 0)) + 1);
  std::vector<Evaluation> history;
  for (const std::vector<double>& v : entries) {
    const Evaluation e{.step = static_cast<std::int64_t>(v[0]), .train_loss = v[1], .val_loss = v[2], .lr = v[3],
                       .tokens_per_s = v[4], .elapsed_s = v[5]};
    if (!history.empty() && e.step <= history.back().step)
      throw std::invalid_argument(fmt::format("history entry {}: 'step' must grow from entry to entry", history.size() + 1));
    history.push_back(e);
  }
  return history;
}

std::string loss_chart(const std::vector<Evaluation>& history, double bigram_val_loss, const std::string& title) {
  train::Curve train{"train loss", {}, {}}, val{"validation loss", {}, {}}, bigram{"bigram (validation)", {}, {}};
  for (const Evaluation& e : history) {
    const auto step = static_cast<double>(e.step);
    train.steps.push_back(step), train.values.push_back(e.train_loss);
    val.steps.push_back(step), val.values.push_back(e.val_loss);
    bigram.steps.push_back(step), bigram.values.push_back(bigram_val_loss);
  }
  return train::loss_curves_svg({train, val, bigram}, title, "step");
}

}  // namespace cppgrad::gpt
