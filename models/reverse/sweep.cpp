#include "models/reverse/sweep.h"

#include <fmt/format.h>

#include <stdexcept>

#include "train/flags.h"
#include "train/plot/progress_bar.h"

namespace cppgrad::reverse {

std::vector<TrainConfig> sweep_runs(const std::string& heads, const std::string& attentions, const TrainConfig& base) {
  std::vector<TrainConfig> runs;
  const auto kinds = train::split_list(attentions);
  for (const auto& h : train::split_list(heads)) {
    const auto n = parse_int(h);
    if (!n) throw std::invalid_argument("--heads: '" + h + "' is not a number");
    for (const auto& a : kinds) {
      TrainConfig c = base;
      c.model.n_heads = *n;
      config_table().set_flag(c, "attention", a);
      runs.push_back(c);
    }
  }
  if (runs.empty())
    throw std::invalid_argument("sweep needs --heads 1,2,4,8 and/or --attention scaled_dot,additive,multiplicative");
  for (auto& c : runs) {
    try {
      c.validate();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("setting heads={} attention={}: {}", c.model.n_heads,
                                              choice_name(nn::kCrossAttentionChoices, c.model.cross_attention), e.what()));
    }
  }
  return runs;
}

SettingResult train_setting(const TrainConfig& config, std::FILE* progress, const std::string& label) {
  Trainer trainer(config);
  const std::string& attention = choice_name(nn::kCrossAttentionChoices, config.model.cross_attention);
  {
    train::ProgressBar bar(progress, fmt::format("{} heads={} {}", label, config.model.n_heads, attention),
                           trainer.steps_per_epoch() * config.epochs);
    while (trainer.epochs_done() < config.epochs) {
      const std::int64_t before = trainer.epochs_done() * trainer.steps_per_epoch();
      trainer.run_epoch([&](std::int64_t done, std::int64_t, double loss) { bar.tick(before + done, loss); });
    }
  }
  SettingResult r{summarize(trainer.history(), trainer.model().num_parameters()), trainer.history().back().loss, {}};
  r.curve.label = fmt::format("heads={} {}", config.model.n_heads, attention);
  for (const auto& m : trainer.history()) r.curve.values.push_back(m.loss);
  return r;
}

}  // namespace cppgrad::reverse
