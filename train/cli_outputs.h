#pragma once
// The output flags of a `train` command, declared and opened in one place for every program (cppgrad's two, and
// yours): --save, --resume, --metrics-out and --plot (with the program's words for what each holds), any outputs of
// its own, then --detect-anomaly, --quiet and --help. Every path is checked before anything is trained or written
// (train/outputs.h).
#include <cxxopts.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/autograd.h"
#include "train/cli.h"
#include "train/cli_flags.h"
#include "train/lines_output.h"

namespace cppgrad::train {

// What --save, --resume, --metrics-out and --plot hold, in the program's words.
struct OutputHelp {
  std::string save, resume, metrics, plot;
};

inline void add_output_flags(cxxopts::Options& o, const OutputHelp& help) {
  o.add_options("output")
      ("save", help.save, cxxopts::value<std::string>())
      ("resume", help.resume, cxxopts::value<std::string>())
      ("metrics-out", help.metrics, cxxopts::value<std::string>())
      ("plot", help.plot, cxxopts::value<std::string>());
}

// After the program's own flags: the last of the output group.
inline void add_run_flags(cxxopts::Options& o) {
  o.add_options("output")
      ("detect-anomaly", "stop at the first NaN/Inf in a forward result or gradient, naming the op and its line")
      ("quiet", "only the final summary")
      ("h,help", "this help");
}

// A `train` command's flags in one: every row of the config table under its group, the output flags (in the
// program's words), then --detect-anomaly, --quiet and --help.
template <typename Config>
cxxopts::Options train_options(const std::string& command, const std::string& description,
                               const ConfigTable<Config>& table, const OutputHelp& help) {
  cxxopts::Options o(command, description);
  add_config_flags(o, table);
  add_output_flags(o, help);
  add_run_flags(o);
  return o;
}

// Where a training run writes, and how it runs.
struct TrainOutputs {
  std::string save, plot, resume;
  std::optional<LinesOutput> metrics;
  bool quiet = false;
  std::optional<DetectAnomalyGuard> anomaly;  // --detect-anomaly: the first NaN or Inf names its op, while `out` lives
};

// The outputs the flags name, checked, into `out` (a metrics stream cannot be moved), and --detect-anomaly turned on;
// `own` lists the program's other output flags (name, whether a stream such as a FIFO may take it), `inputs` the
// files the run reads (its --data), which no output may overwrite. A process other than rank 0 under mpirun writes
// nothing and prints nothing.
inline void open_train_outputs(const cxxopts::ParseResult& r, bool rank0, TrainOutputs& out,
                               const std::vector<std::pair<std::string, bool>>& own = {},
                               const std::vector<InputFlag>& inputs = {}) {
  out.resume = flag_path(r, "resume");
  if (r.count("detect-anomaly")) out.anomaly.emplace();
  if (!rank0) {
    out.quiet = true;
    return;
  }
  out.save = flag_path(r, "save"), out.plot = flag_path(r, "plot");
  out.quiet = r.count("quiet") > 0;
  std::vector<std::pair<std::string, bool>> flags = {{"save", false}, {"metrics-out", true}, {"plot", false}};
  flags.insert(flags.end(), own.begin(), own.end());
  std::vector<OutputFlag> outputs;
  for (const auto& [flag, stream] : flags)
    if (r.count(flag)) outputs.push_back({"--" + flag, r[flag].as<std::string>(), stream});
  check_outputs_or_usage_error(outputs, out.resume, inputs);
  if (r.count("metrics-out")) out.metrics.emplace(r["metrics-out"].as<std::string>(), LinesOutput::Kind::Whole);
}

// At an evaluation, every output the flags named: the metrics stream gets `metrics` (all its lines so far), --plot the
// SVG `plot` draws (called only then), and --save the checkpoint `save` writes to the path it is given.
inline void write_outputs(TrainOutputs& out, const std::string& metrics, const std::function<std::string()>& plot,
                          const std::function<void(const std::string&)>& save) {
  if (out.metrics) out.metrics->write(metrics);
  if (!out.plot.empty()) write_file_atomically(out.plot, plot());
  if (!out.save.empty()) save(out.save);
}

}  // namespace cppgrad::train
