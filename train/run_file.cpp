#include "train/run_file.h"

#include <stdexcept>

#include "train/plot/charts.h"

namespace cppgrad::train {

void save_run(const std::string& path, const CheckpointFormat& format, const std::string& config_json,
              const std::vector<HistoryField>& fields, const RunParts& run) {
  CheckpointMeta meta{.config = config_json, .global_step = run.step, .history = history_json(fields, run.history)};
  for (const auto& [name, generator] : run.generators) meta.generators[name] = generator->state();
  save_checkpoint(path, format, run.model, run.optimizer, meta);
}

void resume_run(const std::string& path, const CheckpointFormat& format, const std::vector<HistoryField>& fields,
                const RunParts& run) {
  std::vector<std::string> names;
  for (const auto& [name, _] : run.generators) names.push_back(name);
  const CheckpointState state = checkpoint_state(read_checkpoint(path, format), path, names);
  std::vector<std::vector<double>> history;
  try {
    // At most one evaluation a step, and one before the first.
    history = parse_history(state.meta.history, fields, /*non_negative=*/false,
                            static_cast<std::size_t>(state.meta.global_step) + 1);
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  restore_checkpoint(state, path, run.model, run.optimizer);  // the last part that can refuse
  for (const auto& [name, generator] : run.generators) generator->set_state(state.meta.generators.at(name));
  run.step = state.meta.global_step;
  run.history = std::move(history);
}

std::string history_svg(const std::vector<HistoryField>& fields, const std::vector<std::vector<double>>& history,
                        const std::string& title) {
  std::size_t x = fields.size();  // the first count field, the curves' x
  for (std::size_t f = 0; f < fields.size() && x == fields.size(); ++f)
    if (fields[f].count) x = f;
  std::vector<Curve> curves;
  for (std::size_t f = 0; f < fields.size(); ++f) {
    if (fields[f].count) continue;
    Curve curve{fields[f].key, {}};
    for (const std::vector<double>& entry : history) {
      curve.values.push_back(entry.at(f));
      if (x < fields.size()) curve.steps.push_back(entry.at(x));
    }
    curves.push_back(std::move(curve));
  }
  return loss_curves_svg(curves, title, x < fields.size() ? fields[x].key : "evaluation");
}

}  // namespace cppgrad::train
