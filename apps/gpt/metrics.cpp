#include "gpt/metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "train/plot/charts.h"

namespace cppgrad::gpt {

using nlohmann::json;

namespace {

json to_json(const Evaluation& e) {
  return {{"step", e.step}, {"train_loss", e.train_loss}, {"val_loss", e.val_loss}, {"lr", e.lr},
          {"tokens_per_s", e.tokens_per_s}, {"elapsed_s", e.elapsed_s}};
}

}  // namespace

std::string evaluation_json(const Evaluation& e) { return to_json(e).dump(); }

std::string metrics_jsonl(const std::vector<Evaluation>& history, const FinalSummary* final) {
  std::string out;
  for (const Evaluation& e : history) out += evaluation_json(e) + "\n";
  if (final)
    out += json{{"event", "final"}, {"val_loss", final->val_loss}, {"bigram_val_loss", final->bigram_val_loss},
                {"steps", final->steps}, {"params", final->params}, {"train_wall_s", final->train_wall_s}}.dump() + "\n";
  return out;
}

std::string history_json(const std::vector<Evaluation>& history) {
  json arr = json::array();
  for (const Evaluation& e : history) arr.push_back(to_json(e));
  return arr.dump();
}

std::vector<Evaluation> parse_history(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) throw std::invalid_argument("metadata 'history' is not a JSON array");
  std::vector<Evaluation> history;
  for (const json& e : j) {
    const std::string where = fmt::format("history entry {}", history.size() + 1);
    if (!e.is_object()) throw std::invalid_argument(where + " is not an object");
    auto number = [&](const char* key) {
      if (!e.contains(key) || !e.at(key).is_number() || !std::isfinite(e.at(key).get<double>()) ||
          e.at(key).get<double>() < 0)
        throw std::invalid_argument(where + ": '" + key + "' must be a finite number >= 0");
      return e.at(key).get<double>();
    };
    if (!e.contains("step") || !e.at("step").is_number_unsigned() || e.at("step").get<std::uint64_t>() > (1ull << 53))
      throw std::invalid_argument(where + ": 'step' must be a whole number");
    Evaluation ev{.step = e.at("step").get<std::int64_t>(), .train_loss = number("train_loss"),
                  .val_loss = number("val_loss"), .lr = number("lr"), .tokens_per_s = number("tokens_per_s"),
                  .elapsed_s = number("elapsed_s")};
    if (!history.empty() && ev.step <= history.back().step)
      throw std::invalid_argument(where + ": 'step' must grow from entry to entry");
    history.push_back(ev);
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
