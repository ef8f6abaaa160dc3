#pragma once
// The output flags of a `train` command, declared and opened in one place for both programs: --save, --resume,
// --metrics-out and --plot (with the program's words for what each holds), any outputs of its own, then
// --detect-anomaly, --quiet and --help. Every path is checked before anything is trained or written (train/outputs.h).
#include <cxxopts.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/program.h"
#include "train/lines_output.h"

namespace cppgrad::cli {

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

// Where a training run writes.
struct TrainOutputs {
  std::string save, plot, resume;
  std::optional<train::LinesOutput> metrics;
  bool quiet = false;
};

// The outputs the flags name, checked, into `out` (a metrics stream cannot be moved); `own` lists the program's other
// output flags (name, whether a stream such as a FIFO may take it). A process other than rank 0 under mpirun writes
// nothing and prints nothing.
inline void open_train_outputs(const cxxopts::ParseResult& r, bool rank0, TrainOutputs& out,
                               const std::vector<std::pair<std::string, bool>>& own = {}) {
  out.resume = flag_path(r, "resume");
  if (!rank0) {
    out.quiet = true;
    return;
  }
  out.save = flag_path(r, "save"), out.plot = flag_path(r, "plot");
  out.quiet = r.count("quiet") > 0;
  std::vector<std::pair<std::string, bool>> flags = {{"save", false}, {"metrics-out", true}, {"plot", false}};
  flags.insert(flags.end(), own.begin(), own.end());
  std::vector<train::OutputFlag> outputs;
  for (const auto& [flag, stream] : flags)
    if (r.count(flag)) outputs.push_back({"--" + flag, r[flag].as<std::string>(), stream});
  check_outputs_or_usage_error(outputs, out.resume);
  if (r.count("metrics-out")) out.metrics.emplace(r["metrics-out"].as<std::string>(), train::LinesOutput::Kind::Whole);
}

}  // namespace cppgrad::cli
