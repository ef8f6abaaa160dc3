#include "apps/gpt/inspect_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "models/gpt/attention_panels.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/eval_data.h"
#include "models/gpt/prompt.h"
#include "models/gpt/report.h"
#include "models/gpt/trainer.h"
#include "train/cli.h"
#include "train/lines_output.h"
#include "train/plot/attention_maps.h"
#include "train/plot/progress_bar.h"
#include "train/plot/terminal.h"

namespace cppgrad::gpt {

using train::flag_path;
using train::flag_value;
using train::UsageError;

namespace {

// The checkpoint named by --checkpoint, loaded, or a usage error saying the flag is missing.
LoadedModel checkpoint_flag(const cxxopts::ParseResult& r, const char* command) {
  if (!r.count("checkpoint")) throw UsageError(fmt::format("{} needs --checkpoint PATH (written by train --save)", command));
  return load_model(r["checkpoint"].as<std::string>());
}

}  // namespace

// ------------------------------------------------------------------------------------------- eval
int cmd_eval(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt eval", "Loss and perplexity of a checkpoint on its validation split or on a file.");
  o.add_options()("checkpoint", "checkpoint written by train --save", cxxopts::value<std::string>())
      ("data", "a file to score (its lines, or its text in windows of the context); default: the validation split",
       cxxopts::value<std::string>())
      ("metrics-out", "JSON Lines: {\"event\": \"eval\", \"loss\", \"perplexity\", \"bpb\", \"tokens\", \"bytes\"}",
       cxxopts::value<std::string>())
      ("threads", "threads (0: OpenMP's default)", cxxopts::value<std::string>()->default_value("0"))
      ("dtype", "float32 | bfloat16: the linear layers' products (default: the checkpoint's)", cxxopts::value<std::string>())
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  const std::string dtype = r.count("dtype") ? r["dtype"].as<std::string>() : "";
  dtype_or(dtype, LinearPrecision::Float32);  // a bad name is refused before the checkpoint is read
  const std::int64_t threads = flag_value<std::int64_t>(r, "threads");
  if (threads < 0 || threads > kMaxThreads) throw UsageError(fmt::format("--threads must be in 0..{}", kMaxThreads));
  // --metrics-out never replaces what eval reads: the checkpoint, --data, or (without --data) the checkpoint's own
  // data, whose path is known once the checkpoint is read.
  const std::string metrics_path = flag_path(r, "metrics-out");
  const std::vector<train::OutputFlag> outputs = {{"--metrics-out", metrics_path, true}};
  if (r.count("metrics-out"))
    train::check_outputs_or_usage_error(outputs, "", {{"--checkpoint", flag_path(r, "checkpoint")},
                                                      {"--data", flag_path(r, "data")}});
  train::set_threads(threads);
  const LoadedModel m = checkpoint_flag(r, "eval");
  if (r.count("metrics-out") && !r.count("data"))
    train::check_outputs_or_usage_error(outputs, "", {{kCheckpointData, m.config.data}});
  std::optional<train::LinesOutput> metrics;
  if (r.count("metrics-out")) metrics.emplace(metrics_path, train::LinesOutput::Kind::Whole);
  const EvalData data = eval_data(m, r.count("data") ? std::optional(r["data"].as<std::string>()) : std::nullopt);
  const LinearPrecisionGuard precision(dtype_or(dtype, m.config.dtype));
  train::ProgressBarFromFirstReport bar(stderr, "eval", "chunks/s");  // on stderr: stdout is the result
  const SplitLoss l = split_loss(*m.model, data.corpus, /*validation=*/true,
                                 [&](std::int64_t done, std::int64_t total, double loss) { bar.report(done, total, loss); });
  bar.finish();
  fmt::print("{}", eval_line(r["checkpoint"].as<std::string>(), m.steps_done, l, data.what));
  if (metrics) metrics->write(eval_json(l));
  return 0;
}

// ------------------------------------------------------------------------------------------- attention
int cmd_attention(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt attention", "Every layer's and head's causal attention over a prompt.");
  o.add_options()("checkpoint", "checkpoint written by train --save", cxxopts::value<std::string>())
      ("prompt", "the text to read", cxxopts::value<std::string>())
      ("svg", "also write every layer's and head's map to this SVG file", cxxopts::value<std::string>())
      ("no-color", "plain characters only in the heatmap")
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  if (!r.count("prompt")) throw UsageError("attention needs --prompt TEXT");
  const std::string svg = flag_path(r, "svg"), prompt = r["prompt"].as<std::string>();
  if (r.count("svg"))  // never over the checkpoint it reads
    train::check_outputs_or_usage_error({{"--svg", svg}}, "", {{"--checkpoint", flag_path(r, "checkpoint")}});
  const LoadedModel m = checkpoint_flag(r, "attention");
  const std::vector<std::int64_t> ids = ids_to_read(m.tokenizer, prompt, m.context, "--prompt");
  const AttentionPanels maps = attention_panels(*m.model, m.tokenizer, ids);
  fmt::print("last layer's attention (mean over heads): rows = the position reading, columns = what it reads\n");
  std::cout << train::terminal_heatmap(maps.mean_last, maps.labels, maps.labels,
                                       !r.count("no-color") && train::ProgressBar::is_terminal(stdout));
  if (svg.empty()) return 0;
  write_file_atomically(svg, train::attention_maps_svg(maps.panels, maps.labels, maps.labels,
                                                       "cppgrad-gpt: causal attention of " + prompt));
  fmt::print("wrote {} attention maps ({} layers x {} heads) to {}\n", maps.panels.size(), maps.layers,
             maps.panels.size() / std::max<std::size_t>(1, maps.layers), svg);
  return 0;
}

}  // namespace cppgrad::gpt
