// cppgrad-reverse: trains an encoder-decoder transformer to reverse integer sequences, evaluates it honestly
// (greedy decoding from the source alone), and shows what it learned.
//
//   cppgrad-reverse train   [flags]                     train, print progress, save checkpoints and metrics
//   cppgrad-reverse eval    --checkpoint PATH [--seed N] greedy accuracy on a fresh test set, with examples
//   cppgrad-reverse predict --checkpoint PATH 1 3 5 7 9  the reversal and its cross-attention map
//   cppgrad-reverse sweep   --heads 1,2,4,8 [--attention scaled_dot,additive]  train each setting, compare
//
// Exit status: 0 on success, 2 on bad input (flags, values, files), 3 when training diverged (the loss became
// NaN or Inf; nothing of that epoch is saved), 130 / 143 when Ctrl-C / SIGTERM stopped training (at a step boundary,
// saved with --save; a second signal stops at once), 1 on an unexpected failure.
#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>
#include <set>

#include "apps/cli/processes.h"
#include "core/atomic_file.h"
#include "models/reverse/attention_view.h"
#include "models/reverse/evaluate.h"
#include "models/reverse/metrics.h"
#include "models/reverse/prediction.h"
#include "models/reverse/report.h"
#include "models/reverse/sweep.h"
#include "models/reverse/train_checks.h"
#include "models/reverse/tutorial.h"
#include "train/cli.h"
#include "train/cli_flags.h"
#include "train/cli_outputs.h"
#include "train/outputs.h"
#include "train/plot/progress_bar.h"
#include "train/plot/terminal.h"
#include "train/stop.h"

using namespace cppgrad;
using namespace cppgrad::reverse;
using namespace cppgrad::train;

namespace {

// ------------------------------------------------------------------------------------------- train
// --arch tutorial: the seed tutorial's model, reported the tutorial's way and honestly, side by side.
int train_tutorial(const TrainConfig& config, train::TrainOutputs& out) {
  TutorialTrainer trainer(config);
  if (!out.quiet) fmt::print("{}{}", tutorial_intro(), nn::summary(trainer.model(), "tutorial"));
  TutorialEpoch last;
  for (std::int64_t epoch = 1; epoch <= config.epochs; ++epoch) {
    ProgressBar bar(stdout, fmt::format("epoch {:>3}/{}", epoch, config.epochs), trainer.steps_per_epoch());
    last = trainer.run_epoch([&](std::int64_t done, std::int64_t, double loss) {
      if (!out.quiet) bar.tick(done, loss);
    });
    bar.finish();  // the epoch's line takes its place
    if (!out.quiet) fmt::print("{}", tutorial_epoch_line(last, epoch, config.epochs));
    write_outputs(out, metrics_jsonl(trainer.history(), nullptr),
                  [&] { return training_curves(trainer.history(), "seed tutorial model (honest accuracy)"); }, nullptr);
  }
  const FinalSummary final = summarize(trainer.history(), trainer.model().num_parameters());
  if (out.metrics) out.metrics->write(metrics_jsonl(trainer.history(), &final));
  fmt::print("{}", tutorial_final_lines(last));
  return 0;
}

// One epoch with a progress bar, its line, and every output written; returns the steps run.
std::int64_t train_one_epoch(Trainer& trainer, const TrainConfig& config, train::TrainOutputs& out,
                            const Trainer::StopCheck& stop) {
  std::int64_t steps = 0;
  const std::int64_t first_step = trainer.epoch_progress().steps;  // a checkpoint saved mid-epoch: its steps are done
  ProgressBar bar(stdout, fmt::format("epoch {:>3}/{}", trainer.epochs_done() + 1, config.epochs),
                  trainer.steps_per_epoch());  // cleared when an exception leaves it (train/plot/progress_bar.h)
  const EpochMetrics m = trainer.run_epoch([&](std::int64_t done, std::int64_t, double loss) {
    ++steps;
    if (!out.quiet) bar.tick(done, loss, first_step);
  }, stop);  // a stop asked for by a signal: before the next step
  bar.finish();
  if (!out.quiet) fmt::print("{}", epoch_line(m, config.epochs, trainer.last_epoch_grad_norms()));
  std::fflush(stdout);
  write_outputs(out, metrics_jsonl(trainer.history(), nullptr),
                [&] { return training_curves(trainer.history(), "cppgrad-reverse"); },
                [&](const std::string& path) { trainer.save(path); });
  return steps;
}

int cmd_train(int argc, char** argv) {
  cxxopts::Options o("cppgrad-reverse train", "Train the reversal transformer; accuracy is greedy decoding from BOS.");
  train::add_config_flags(o, config_table());
  train::add_output_flags(o, {.save = "checkpoint written after every epoch, and mid-epoch when Ctrl-C or SIGTERM stops "
                                    "the run (atomically)",
                            .resume = "continue a checkpoint (its config; flags you give must agree)",
                            .metrics = "JSON Lines: one object per epoch, then a final one",
                            .plot = "SVG of loss and accuracy per epoch"});
  o.add_options("output")
      ("trace-graph", "Graphviz DOT of the first step's autograd graph, with gradient norms", cxxopts::value<std::string>())
      ("grad-log", "JSON Lines: per parameter gradient norm, weight norm, update/weight ratio", cxxopts::value<std::string>())
      ("grad-log-every", "steps between --grad-log lines", cxxopts::value<std::string>()->default_value("10"));
  train::add_run_flags(o);
  const auto r = train::parse_flags(o, argc, argv);
  // The run's configuration: the defaults or the resumed checkpoint's, with the flags given; validated (a refusal is a
  // std::invalid_argument: exit status 2). A resumed run keeps its checkpoint's shards.
  TrainConfig config = r.count("resume") ? read_checkpoint_config(r["resume"].as<std::string>()) : TrainConfig{};
  train::apply_config_flags(r, config_table(), config);
  config = config.with_shards();
  config.validate();
  train::set_threads(config.threads);
  // Under mpirun: every process trains its block of each batch's shards; rank 0 alone writes and prints.
  const std::unique_ptr<train::ProcessLink> processes = cli::join_processes("cppgrad-reverse");
  const bool rank0 = !processes || processes->rank() == 0;
  train::TrainOutputs out;  // where the run writes (train/outputs.h)
  train::open_train_outputs(r, rank0, out, {{"trace-graph", false}, {"grad-log", true}});
  check_train_run(config, out.save, out.resume, processes ? processes->size() : 0, rank0);
  if (config.arch == Arch::tutorial) return train_tutorial(config, out);
  Trainer trainer(config, processes.get());
  if (!out.resume.empty()) trainer.load(out.resume);
  if (r.count("trace-graph") && rank0) trainer.trace_graph_once(r["trace-graph"].as<std::string>());
  if (r.count("grad-log") && rank0) {
    const std::int64_t every = flag_value<std::int64_t>(r, "grad-log-every");
    if (every <= 0) throw UsageError("--grad-log-every must be positive");
    trainer.log_gradients(r["grad-log"].as<std::string>(), every);
  }
  if (!out.quiet)  // what the run is, the model's layers and their parameters' shapes, where a resumed run goes on
    fmt::print("{}\n{}{}", run_description(config, omp_get_max_threads()), nn::summary(trainer.model(), "model"),
               resumed_line(trainer, out.resume));
  const auto wall_start = std::chrono::steady_clock::now();
  std::int64_t steps_run = 0;
  train::catch_stop_signals();  // from here Ctrl-C and SIGTERM stop at the next step boundary (train/stop.h)
  const Trainer::StopCheck stop = [&] { return cli::stop_requested(processes.get()); };
  try {
    while (trainer.epochs_done() < config.epochs) steps_run += train_one_epoch(trainer, config, out, stop);
  } catch (const train::TrainingStopped& stopped) {
    if (!rank0) return train::stop_status();  // rank 0 saves and says how to resume: saved with --save (mid-epoch
    return train::stopped_by_signal(           // too), one line saying how to go on, and the status (130, 143)
        "cppgrad-reverse", fmt::format("stopped by {} in epoch {} after step {} of {}", train::stop_signal_name(),
                                       stopped.epoch, stopped.step, stopped.steps),
        out.save, [&](const std::string& path) { trainer.save(path); });
  }
  if (!rank0) return 0;
  const FinalSummary final = summarize(trainer.history(), trainer.model().num_parameters());
  if (out.metrics) out.metrics->write(metrics_jsonl(trainer.history(), &final));
  const double session_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  fmt::print("{}", final_lines(final, session_s, steps_run));
  return 0;
}

// ------------------------------------------------------------------------------------------- eval / predict
int cmd_eval(int argc, char** argv) {
  cxxopts::Options o("cppgrad-reverse eval", "Greedy accuracy of a checkpoint on a freshly generated test set.");
  o.add_options()("checkpoint", "checkpoint to evaluate", cxxopts::value<std::string>())
      ("seed", "seed of the fresh test set", cxxopts::value<std::string>()->default_value("1"))
      ("examples", "examples to print", cxxopts::value<std::string>()->default_value("5"))
      ("threads", "threads; each runs a slice of every batch on its own model replica (0: OpenMP's default)", cxxopts::value<std::string>()->default_value("0"))
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  if (!r.count("checkpoint")) throw UsageError("eval needs --checkpoint PATH");
  const std::uint64_t seed = flag_value<std::uint64_t>(r, "seed");
  const std::int64_t examples = flag_value<std::int64_t>(r, "examples"), threads = flag_value<std::int64_t>(r, "threads");
  if (examples < 0) throw UsageError("--examples must be >= 0");
  Trainer trainer = load_trained(r["checkpoint"].as<std::string>(), threads, train::set_threads);
  const data::ReversalConfig dcfg = trainer.config().data_config();
  const FreshEvaluation e = evaluate_fresh(trainer.model(), dcfg, seed);
  fmt::print("{}", eval_line(r["checkpoint"].as<std::string>(), trainer.epochs_done(), e.test.size(), seed, e.accuracy));
  for (std::int64_t i = 0; i < std::min<std::int64_t>(examples, e.test.size()); ++i)
    fmt::print("{}", example_line(e.test.sequences[i], readable_row(e.predictions, i, dcfg)));
  return 0;
}

int cmd_predict(int argc, char** argv) {
  cxxopts::Options o("cppgrad-reverse predict",
                     "Reverse one sequence with a checkpoint and show its cross-attention. TOKENS: the sequence, as\n"
                     "whole numbers 1..vocab-1 separated by spaces, e.g. 1 3 5 7 9.");
  o.custom_help("--checkpoint PATH [OPTION...] TOKENS...");
  o.add_options()("checkpoint", "checkpoint to use", cxxopts::value<std::string>())
      ("attention-svg", "write every layer's and head's attention maps as SVG", cxxopts::value<std::string>())
      ("no-color", "plain characters only in the heatmap")
      ("h,help", "this help");
  o.allow_unrecognised_options();
  const auto r = train::parse_flags(o, argc, argv, /*positional=*/true);  // the tokens
  if (!r.count("checkpoint")) throw UsageError("predict needs --checkpoint PATH and the tokens, e.g. 1 3 5 7 9");
  if (r.count("attention-svg"))  // never over the checkpoint it reads
    check_outputs_or_usage_error({{"--attention-svg", r["attention-svg"].as<std::string>()}}, "",
                                 {{"--checkpoint", r["checkpoint"].as<std::string>()}});
  if (r.unmatched().empty())
    throw UsageError("predict needs the tokens to reverse, e.g. predict --checkpoint m.safetensors 1 3 5 7 9");
  Trainer trainer = load_trained(r["checkpoint"].as<std::string>(), 0, train::set_threads);
  const data::ReversalConfig dcfg = trainer.config().data_config();
  const std::vector<std::int64_t> tokens = parse_sequence(r.unmatched(), dcfg);
  const Prediction p = predict_one(trainer.model(), tokens, dcfg);
  fmt::print("{}", prediction_line(tokens, p.output));
  const AttentionView view = attention_view(trainer.model(), p, dcfg);
  fmt::print("\n{} (mean over heads): rows = output positions, columns = input tokens\n", view.maps.back().name);
  const bool color = !r.count("no-color") && ProgressBar::is_terminal(stdout);
  std::cout << terminal_heatmap(view.last_mean, view.rows, view.cols, color);
  if (const std::string svg = flag_path(r, "attention-svg"); !svg.empty()) {
    const std::vector<AttentionPanel> panels = attention_panels(view.maps, view.rows, view.cols);
    const std::string title = "cppgrad-reverse: attention of " + tokens_text(tokens);
    write_file_atomically(svg, attention_maps_svg(panels, view.rows, view.cols, title));
    fmt::print("wrote {} attention maps to {}\n", panels.size(), svg);
  }
  return 0;
}

// ------------------------------------------------------------------------------------------- sweep
int cmd_sweep(int argc, char** argv) {
  cxxopts::Options o("cppgrad-reverse sweep", "Train one model per setting and compare them.");
  const std::set<std::string> lists = {"heads", "attention"};  // comma-separated: one run per combination
  train::add_config_flags(o, config_table(), lists);
  o.add_options("sweep")
      ("heads", "comma-separated head counts to compare, e.g. 1,2,4,8",
       cxxopts::value<std::string>()->default_value(std::to_string(TrainConfig{}.model.n_heads)))
      ("attention", "comma-separated cross-attention kinds to compare (scaled_dot,additive,multiplicative)",
       cxxopts::value<std::string>()->default_value(choice_name(nn::kCrossAttentionChoices, TrainConfig{}.model.cross_attention)))
      ("plot", "SVG of every run's loss curve", cxxopts::value<std::string>()->default_value("sweep.svg"))
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  check_outputs_or_usage_error({{"--plot", r["plot"].as<std::string>()}});
  TrainConfig base;
  train::apply_config_flags(r, config_table(), base, lists);
  const std::vector<TrainConfig> runs = sweep_runs(r["heads"].as<std::string>(), r["attention"].as<std::string>(), base);
  train::set_threads(base.threads);
  std::vector<Curve> curves;
  fmt::print("{}", sweep_header());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const SettingResult s = train_setting(runs[i], stdout, fmt::format("run {}/{}", i + 1, runs.size()));
    fmt::print("{}", sweep_row(runs[i], s));
    std::fflush(stdout);
    curves.push_back(s.curve);
  }
  write_file_atomically(r["plot"].as<std::string>(), loss_curves_svg(curves, "cppgrad-reverse sweep: training loss"));
  fmt::print("wrote the loss curves to {}\n", r["plot"].as<std::string>());
  return 0;
}

const char* kUsage =
    "usage: cppgrad-reverse <command> [flags]   (cppgrad-reverse <command> --help for its flags)\n"
    "       cppgrad-reverse --version\n\n"
    "  train    train the reversal transformer (defaults: 5000/500 sequences of 8 tokens 1..9, d_model 32,\n"
    "           4 heads, 2+2 layers, Adam 1e-3, batch 64, 30 epochs, seed 42)\n"
    "  eval     greedy accuracy of a checkpoint on a fresh test set\n"
    "  predict  reverse one sequence and show the cross-attention map\n"
    "  sweep    train several settings (heads, attention kinds) and compare\n";

}  // namespace

int main(int argc, char** argv) {
  return train::run_program("cppgrad-reverse", argc, argv, kUsage,
                          {{"train", cmd_train}, {"eval", cmd_eval}, {"predict", cmd_predict}, {"sweep", cmd_sweep}},
                          "smaller --d-model, --d-ff, --batch-size or --train-size need less");
}
