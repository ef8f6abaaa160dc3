#pragma once
// A step-based run's checkpoint, metrics stream and plot in a few calls. The program says once what its checkpoint
// is (its format, its config table, the fields of its history) and hands over its run's parts by reference:
//
//   const train::RunFile<Config> kFile{{.program = "makemore", .format = "makemore-checkpoint-v1"}, kTable,
//                                      {{"step", /*count=*/true}, {"val_loss"}}};
//   kFile.resume(path, run.parts());                              // the run built from its config, then restored
//   kFile.write_outputs(out, run.config, run.parts(), "title");   // each evaluation: metrics, plot, checkpoint
//   kFile.save(path, run.config, run.parts());                    // on Ctrl-C
//
// The file is train/checkpoint.h's: the weights, the optimizer's state, the config as the table's JSON, the step, each
// generator under its name and the history, so a resumed run goes on exactly as an unbroken one. Resuming checks all
// of it before any part changes. A program whose checkpoint holds more (an epoch's progress, a vocabulary) calls
// train/checkpoint.h itself, as cppgrad-reverse and cppgrad-gpt do.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/generator.h"
#include "nn/module.h"
#include "optim/optimizer.h"
#include "train/checkpoint.h"
#include "train/cli_outputs.h"
#include "core/config_table.h"
#include "train/history.h"

namespace cppgrad::train {

// What a run's checkpoint holds, by reference to the program's own objects.
struct RunParts {
  nn::Module& model;
  optim::Optimizer& optimizer;
  std::int64_t& step;                                          // optimizer steps taken
  std::vector<std::vector<double>>& history;                   // per evaluation: a value per history field
  std::vector<std::pair<std::string, Generator*>> generators;  // each saved under its name ("batch_rng")
};

// The parts written to `path` with the config's JSON; and read back, every part checked before any changes (a refused
// file leaves the run as it was: std::runtime_error "checkpoint <path>: <what>").
void save_run(const std::string& path, const CheckpointFormat& format, const std::string& config_json,
              const std::vector<HistoryField>& fields, const RunParts& run);
void resume_run(const std::string& path, const CheckpointFormat& format, const std::vector<HistoryField>& fields,
                const RunParts& run);
// Every field of the history that is not a count, one curve each, against the first count field (the step).
std::string history_svg(const std::vector<HistoryField>& fields, const std::vector<std::vector<double>>& history,
                        const std::string& title);

template <typename Config>
struct RunFile {
  CheckpointFormat format;
  const ConfigTable<Config>& table;
  std::vector<HistoryField> history;  // the fields of an evaluation, in order: {"step", true}, {"val_loss"}

  void save(const std::string& path, const Config& config, const RunParts& run) const {
    save_run(path, format, table.to_json(config), history, run);
  }
  void resume(const std::string& path, const RunParts& run) const { resume_run(path, format, history, run); }
  // At an evaluation, what the flags asked for: the metrics stream, the plot, the checkpoint.
  void write_outputs(TrainOutputs& out, const Config& config, const RunParts& run, const std::string& title) const {
    train::write_outputs(
        out, history_jsonl(history, run.history), [&] { return history_svg(history, run.history, title); },
        [&](const std::string& path) { save(path, config, run); });
  }
};

}  // namespace cppgrad::train
