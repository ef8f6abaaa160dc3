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
#include <csignal>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/atomic_file.h"
#include "core/autograd.h"
#include "core/ops/reduce.h"
#include "apps/cli/processes.h"
#include "cppgrad/version.h"
#include "models/reverse/greedy.h"
#include "models/reverse/metrics.h"
#include "models/reverse/trainer.h"
#include "models/reverse/tutorial.h"
#include "train/cli.h"
#include "train/cli_flags.h"
#include "train/cli_outputs.h"
#include "train/diverged.h"
#include "train/flags.h"
#include "train/lines_output.h"
#include "train/outputs.h"
#include "train/plot/attention_maps.h"
#include "train/plot/charts.h"
#include "train/plot/progress_bar.h"
#include "train/plot/terminal.h"
#include "train/stop.h"

using namespace cppgrad;
using namespace cppgrad::reverse;
using namespace cppgrad::train;
using train::check_outputs_or_usage_error;
using train::flag_value;
using train::UsageError;

namespace {

std::string percent(double f) { return fmt::format("{:.1f}%", 100 * f); }

// ------------------------------------------------------------------------------------------- train
// --arch tutorial: the seed tutorial's model, reported the tutorial's way and honestly, side by side.
int train_tutorial(const TrainConfig& config, LinesOutput* metrics, const std::string& plot, bool quiet) {
  TutorialTrainer trainer(config);
  if (!quiet) {
    fmt::print("cppgrad-reverse --arch tutorial: the seed tutorial's model as written (decoder without self-attention,\n"
               "trained with the TARGET ITSELF as the decoder input). Two accuracies per epoch: the tutorial's (the\n"
               "target is given again at test time) and the honest greedy one (the decoder starts from nothing).\n");
    std::cout << nn::summary(trainer.model(), "tutorial");
  }
  TutorialEpoch last;
  for (std::int64_t epoch = 1; epoch <= config.epochs; ++epoch) {
    ProgressBar bar(stdout, fmt::format("epoch {:>3}/{}", epoch, config.epochs), trainer.steps_per_epoch());
    const auto t0 = std::chrono::steady_clock::now();
    last = trainer.run_epoch([&](std::int64_t done, std::int64_t, double loss) {
      if (!quiet) bar.update(done, loss, done / std::max(1e-9, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
    });
    bar.finish();
    if (!quiet)
      fmt::print("epoch {:>3}/{}  loss {:.4f}  tutorial's test seq acc {:>6}  honest greedy test seq acc {:>6} (tok {:>6})  {:.2f}s\n",
                 epoch, config.epochs, last.metrics.loss, percent(last.tutorial_test_seq_acc),
                 percent(last.metrics.test_seq_acc), percent(last.metrics.test_token_acc), last.metrics.epoch_s);
    if (metrics) metrics->write(metrics_jsonl(trainer.history(), nullptr));
    if (!plot.empty()) write_file_atomically(plot, training_curves(trainer.history(), "seed tutorial model (honest accuracy)"));
  }
  const FinalSummary final = summarize(trainer.history(), trainer.model().num_parameters());
  if (metrics) metrics->write(metrics_jsonl(trainer.history(), &final));
  fmt::print("tutorial's way (target given to the decoder): test sequence accuracy {}\n", percent(last.tutorial_test_seq_acc));
  fmt::print("honest (greedy, target never given):          test sequence accuracy {} (tokens {})\n",
             percent(last.metrics.test_seq_acc), percent(last.metrics.test_token_acc));
  fmt::print("The gap is the leak: trained on its own answer, the model learned to copy its input, not to reverse.\n");
  return 0;
}

cxxopts::Options train_flags() {
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
  return o;
}

// The run's configuration: the defaults or the resumed checkpoint's, with the flags given; validated.
TrainConfig train_config(const cxxopts::ParseResult& r) {
  TrainConfig config;
  if (r.count("resume")) config = read_checkpoint_config(r["resume"].as<std::string>());
  train::apply_config_flags(r, config_table(), config);
  config = config.with_shards();  // a resumed run keeps its checkpoint's
  try {
    config.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return config;
}

// Where the run writes (train/outputs.h), and a resumed checkpoint with epochs left to train.
void open_train_outputs(const cxxopts::ParseResult& r, const TrainConfig& config, bool rank0, train::TrainOutputs& out) {
  train::open_train_outputs(r, rank0, out, {{"trace-graph", false}, {"grad-log", true}});
  if (rank0 && !out.resume.empty())
    if (const std::int64_t done = read_checkpoint_epoch(out.resume); config.epochs <= done)
      throw UsageError(fmt::format("--resume {}: the checkpoint has trained {} epochs already and --epochs is {}: "
                                   "nothing to do (give --epochs above {} to train further)",
                                   out.resume, done, config.epochs, done));
}

// What the run is, and the model's summary (its layers and their parameters' shapes).
void print_run_header(Trainer& trainer, const TrainConfig& config, const std::string& resume) {
  const data::ReversalConfig dcfg = config.data_config();
  fmt::print("cppgrad-reverse: reverse {} sequences of tokens 1..{} ({} train, {} test, seed {}), {} threads\n",
             dcfg.variable_length() ? fmt::format("{}..{}-token", dcfg.min_len, dcfg.max_len)
                                    : fmt::format("{}-token", dcfg.max_len),
             dcfg.vocab - 1, config.train_size, config.test_size, config.seed, omp_get_max_threads());
  std::cout << nn::summary(trainer.model(), "model");
  if (const std::int64_t step = trainer.epoch_progress().steps; step > 0)
    fmt::print("resumed in epoch {} after step {} of {} from {}\n", trainer.epochs_done() + 1, step,
               trainer.steps_per_epoch(), resume);
  else if (trainer.epochs_done() > 0)
    fmt::print("resumed after epoch {} from {}\n", trainer.epochs_done(), resume);
}

// One epoch with a progress bar, its line, and every output written; returns the steps run.
std::int64_t train_one_epoch(Trainer& trainer, const TrainConfig& config, train::TrainOutputs& out,
                            const Trainer::StopCheck& stop) {
  std::int64_t steps = 0;
  ProgressBar bar(stdout, fmt::format("epoch {:>3}/{}", trainer.epochs_done() + 1, config.epochs),
                  trainer.steps_per_epoch());
  const std::int64_t first_step = trainer.epoch_progress().steps;  // a checkpoint saved mid-epoch: its steps are done
  const auto epoch_start = std::chrono::steady_clock::now();
  const auto on_step = [&](std::int64_t done, std::int64_t, double loss) {
    ++steps;
    if (out.quiet) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    bar.update(done, loss, (done - first_step) / std::max(s, 1e-9));
  };
  EpochMetrics m;
  try {
    m = trainer.run_epoch(on_step, stop);  // a stop asked for by a signal: before the next step
  } catch (...) {
    bar.finish();
    throw;
  }
  bar.finish();
  if (!out.quiet)
    fmt::print("epoch {:>3}/{}  loss {:.4f}  train tok {:>6}  test seq {:>6}  test tok {:>6}  lr {:.2e}  {:.2f}s  |g| {}\n",
               m.epoch, config.epochs, m.loss, percent(m.train_token_acc), percent(m.test_seq_acc),
               percent(m.test_token_acc), m.lr, m.epoch_s, sparkline(downsample(trainer.last_epoch_grad_norms(), 20)));
  std::fflush(stdout);
  if (out.metrics) out.metrics->write(metrics_jsonl(trainer.history(), nullptr));
  if (!out.plot.empty()) write_file_atomically(out.plot, training_curves(trainer.history(), "cppgrad-reverse"));
  if (!out.save.empty()) trainer.save(out.save);
  return steps;
}

void print_final(Trainer& trainer, train::TrainOutputs& out, double session_s, std::int64_t steps_run) {
  const FinalSummary final = summarize(trainer.history(), trainer.model().num_parameters());
  if (out.metrics) out.metrics->write(metrics_jsonl(trainer.history(), &final));
  fmt::print("done: {} epochs, greedy test accuracy {} (tokens {}), best {} at epoch {}; first >= 99% at epoch {}\n",
             final.epochs, percent(final.test_seq_acc), percent(final.test_token_acc), percent(final.best_seq_acc),
             final.best_epoch, final.epoch_99 > 0 ? std::to_string(final.epoch_99) : "never");
  fmt::print("time: {:.1f}s training wall time over all epochs; this session {:.1f}s, {:.1f} steps/s\n",
             final.train_wall_s, session_s, steps_run / std::max(session_s, 1e-9));
}

// A run stopped by Ctrl-C or SIGTERM between two steps: saved with --save (mid-epoch too), one line saying how to
// go on, and the status a signal gives (130, 143).
int stop_training(Trainer& trainer, const train::TrainOutputs& out, const train::TrainingStopped& stopped) {
  return train::stopped_by_signal("cppgrad-reverse",
                                fmt::format("stopped by {} in epoch {} after step {} of {}", train::stop_signal_name(),
                                            stopped.epoch, stopped.step, stopped.steps),
                                out.save, [&](const std::string& path) { trainer.save(path); });
}

int cmd_train(int argc, char** argv) {
  cxxopts::Options o = train_flags();
  const auto r = train::parse_flags(o, argc, argv);
  const TrainConfig config = train_config(r);
  train::set_threads(config.threads);
  // Under mpirun: every process trains its block of each batch's shards; rank 0 alone writes and prints.
  const std::unique_ptr<train::ProcessLink> processes = cli::join_processes("cppgrad-reverse");
  const bool rank0 = !processes || processes->rank() == 0;
  train::TrainOutputs out;
  open_train_outputs(r, config, rank0, out);
  if (processes && (config.arch == Arch::tutorial || config.shards == 1))
    throw UsageError(fmt::format("{} processes need the transformer's sharded step: --arch transformer and --shards a "
                                 "multiple of the processes, got --arch {} --shards {}", processes->size(),
                                 train::choice_name(kArchs, config.arch), config.shards));
  if (config.arch == Arch::tutorial) {
    if (!out.save.empty() || !out.resume.empty())
      throw UsageError("--save and --resume are not available with --arch tutorial");
    return train_tutorial(config, out.metrics ? &*out.metrics : nullptr, out.plot, out.quiet);
  }
  Trainer trainer(config, processes.get());
  if (!out.resume.empty()) trainer.load(out.resume);
  if (r.count("trace-graph") && rank0) trainer.trace_graph_once(r["trace-graph"].as<std::string>());
  if (r.count("grad-log") && rank0) {
    const std::int64_t every = flag_value<std::int64_t>(r, "grad-log-every");
    if (every <= 0) throw UsageError("--grad-log-every must be positive");
    trainer.log_gradients(r["grad-log"].as<std::string>(), every);
  }
  if (!out.quiet) print_run_header(trainer, config, out.resume);
  const auto wall_start = std::chrono::steady_clock::now();
  std::int64_t steps_run = 0;
  train::catch_stop_signals();  // from here Ctrl-C and SIGTERM stop at the next step boundary (train/stop.h)
  const Trainer::StopCheck stop = [&] { return cli::stop_requested(processes.get()); };
  try {
    while (trainer.epochs_done() < config.epochs) steps_run += train_one_epoch(trainer, config, out, stop);
  } catch (const train::TrainingStopped& stopped) {
    if (!rank0) return train::stop_status();  // rank 0 saves and says how to resume
    return stop_training(trainer, out, stopped);
  }
  if (!rank0) return 0;
  print_final(trainer, out, std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(),
              steps_run);
  return 0;
}

// ------------------------------------------------------------------------------------------- eval / predict
Trainer load_trainer(const std::string& path, std::int64_t threads) {
  TrainConfig config = read_checkpoint_config(path);
  config.threads = threads;
  train::set_threads(threads);
  Trainer trainer(config);
  trainer.load(path);
  trainer.model().eval();
  return trainer;
}

std::string tokens_str(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// A prediction row up to (not including) EOS/PAD, as the user reads it.
std::vector<std::int64_t> readable(const Tensor& predictions, std::int64_t row, const data::ReversalConfig& c) {
  std::vector<std::int64_t> out;
  for (std::int64_t t = 0; t < predictions.shape()[1]; ++t) {
    const auto v = static_cast<std::int64_t>(predictions.at({row, t}));
    if (v == data::kPad || (c.variable_length() && v == c.eos())) break;
    out.push_back(v);
  }
  return out;
}

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
  if (threads < 0 || threads > kMaxThreads) throw UsageError(fmt::format("--threads must be in 0..{}", kMaxThreads));
  Trainer trainer = load_trainer(r["checkpoint"].as<std::string>(), threads);
  const data::ReversalConfig dcfg = trainer.config().data_config();
  const data::ReversalSet test = data::make_test_set(dcfg, seed);
  const data::Batch all = data::gather_batch(test, [&] {
    std::vector<std::int64_t> rows(static_cast<std::size_t>(test.size()));
    for (std::int64_t i = 0; i < test.size(); ++i) rows[i] = i;
    return rows;
  }(), dcfg.variable_length());
  const Tensor pred = greedy_decode(trainer.model(), all.src, all.src_mask, dcfg);
  const Accuracy acc = accuracy(pred, test.target);
  fmt::print("checkpoint {} (epoch {}): greedy accuracy on {} fresh test sequences (seed {}): sequences {}, tokens {}\n",
             r["checkpoint"].as<std::string>(), trainer.epochs_done(), test.size(), seed,
             percent(acc.sequence), percent(acc.token));
  for (std::int64_t i = 0; i < std::min<std::int64_t>(examples, test.size()); ++i) {
    const auto got = readable(pred, i, dcfg);
    std::vector<std::int64_t> want(test.sequences[i].rbegin(), test.sequences[i].rend());
    fmt::print("  {} -> {}  {}\n", tokens_str(test.sequences[i]), tokens_str(got), got == want ? "ok" : "WRONG, expected " + tokens_str(want));
  }
  return 0;
}

// The tokens given on the command line, checked against the model's vocabulary and lengths.
std::vector<std::int64_t> predict_tokens(const cxxopts::ParseResult& r, const data::ReversalConfig& dcfg) {
  std::vector<std::int64_t> tokens;
  for (const std::string& s : r.unmatched()) {
    const auto v = parse_int(s);
    if (!v) throw UsageError("predict: '" + s + "' is not a token (an integer) or a known flag");
    tokens.push_back(*v);
  }
  if (tokens.empty()) throw UsageError("predict needs the tokens to reverse, e.g. predict --checkpoint m.safetensors 1 3 5 7 9");
  for (std::int64_t t : tokens)
    if (t < 1 || t >= dcfg.vocab)
      throw UsageError(fmt::format("token {} is outside this model's vocabulary 1..{}", t, dcfg.vocab - 1));
  const std::int64_t L = static_cast<std::int64_t>(tokens.size());
  if (L < dcfg.min_len || L > dcfg.max_len)
    throw UsageError(fmt::format("this model reverses sequences of length {}, got {}",
                                 dcfg.variable_length() ? fmt::format("{}..{}", dcfg.min_len, dcfg.max_len)
                                                        : std::to_string(dcfg.max_len), L));
  return tokens;
}

// Every layer's and head's attention map as an SVG panel. rows: the output tokens; cols: the source tokens.
std::vector<AttentionPanel> attention_panels(const std::vector<nn::NamedAttention>& maps,
                                             const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  std::vector<std::string> decoder_inputs = {"BOS"};
  for (std::size_t t = 0; t + 1 < rows.size(); ++t) decoder_inputs.push_back(rows[t]);
  std::vector<AttentionPanel> panels;
  for (const auto& m : maps) {
    const Tensor w = m.weights.select(0, 0);  // [H, Lq, Lk] or [Lq, Lk]
    const std::int64_t H = w.dim() == 3 ? w.shape()[0] : 1;
    for (std::int64_t h = 0; h < H; ++h) {
      const Tensor wh = w.dim() == 3 ? w.select(0, h) : w;
      // Queries and keys of each kind of map: the source attends to itself, the output to its own inputs
      // (BOS, then what it has produced), and to the source.
      const bool encoder = m.name.rfind("encoder", 0) == 0, cross = m.name.find("cross") != std::string::npos;
      AttentionPanel p{fmt::format("{} head {}", m.name, h), {}, encoder ? cols : rows,
                       encoder || cross ? cols : decoder_inputs};
      for (std::int64_t i = 0; i < wh.shape()[0]; ++i) {
        p.weights.emplace_back();
        for (std::int64_t j = 0; j < wh.shape()[1]; ++j) p.weights.back().push_back(wh.at({i, j}));
      }
      panels.push_back(std::move(p));
    }
  }
  return panels;
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
  Trainer trainer = load_trainer(r["checkpoint"].as<std::string>(), 0);
  const data::ReversalConfig dcfg = trainer.config().data_config();
  const std::vector<std::int64_t> tokens = predict_tokens(r, dcfg);
  const data::Batch b = data::gather_batch(data::make_set(dcfg, {tokens}), {0}, dcfg.variable_length());
  const Tensor pred = greedy_decode(trainer.model(), b.src, b.src_mask, dcfg);
  const auto got = readable(pred, 0, dcfg);
  const std::vector<std::int64_t> want(tokens.rbegin(), tokens.rend());
  fmt::print("{} -> {}  {}\n", tokens_str(tokens), tokens_str(got), got == want ? "(correct)" : "(expected " + tokens_str(want) + ")");

  // One full forward over the decoded sequence fills every layer's attention maps for every position
  // (incremental decoding only saw one position per call): cross-attention [1, H, T, S].
  {
    NoGradGuard no_grad;
    Tensor dec_in = Tensor::full({1, pred.shape()[1]}, static_cast<double>(dcfg.bos()), DType::Int64);
    dec_in.slice(1, 1, pred.shape()[1]).copy_(pred.slice(1, 0, pred.shape()[1] - 1));
    trainer.model().forward(b.src, dec_in, b.src_mask);
  }
  std::vector<std::string> cols, rows;
  for (std::int64_t i = 0; i < dcfg.max_len; ++i) cols.push_back(i < std::ssize(tokens) ? std::to_string(tokens[i]) : "_");
  const auto maps = trainer.model().attention_maps();
  const Tensor last_cross = maps.back().weights;  // decoder.N.cross_attn
  const std::int64_t T = last_cross.shape()[last_cross.dim() - 2];
  for (std::int64_t t = 0; t < T; ++t)
    rows.push_back(t < std::ssize(got) ? std::to_string(got[t]) : (dcfg.variable_length() ? "eos" : "?"));
  Tensor avg = last_cross.dim() == 4 ? mean(last_cross.select(0, 0), {0}) : last_cross.select(0, 0);  // [T, S]
  std::vector<std::vector<double>> grid(T);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t s = 0; s < avg.shape()[1]; ++s) grid[t].push_back(avg.at({t, s}));
  fmt::print("\n{} (mean over heads): rows = output positions, columns = input tokens\n", maps.back().name);
  std::cout << terminal_heatmap(grid, rows, cols, !r.count("no-color") && ProgressBar::is_terminal(stdout));
  if (r.count("attention-svg")) {
    const std::vector<AttentionPanel> panels = attention_panels(maps, rows, cols);
    write_file_atomically(r["attention-svg"].as<std::string>(),
                          attention_maps_svg(panels, rows, cols, "cppgrad-reverse: attention of " + tokens_str(tokens)));
    fmt::print("wrote {} attention maps to {}\n", panels.size(), r["attention-svg"].as<std::string>());
  }
  return 0;
}

// One run per combination of the --heads and --attention lists, each on `base`'s other settings; validated.
std::vector<TrainConfig> sweep_runs(const cxxopts::ParseResult& r, const TrainConfig& base) {
  std::vector<TrainConfig> runs;
  const auto kinds = split_list(r["attention"].as<std::string>());
  for (const auto& h : split_list(r["heads"].as<std::string>())) {
    const auto heads = parse_int(h);
    if (!heads) throw UsageError("--heads: '" + h + "' is not a number");
    for (const auto& a : kinds) {
      TrainConfig c = base;
      c.heads = *heads;
      try {
        config_table().set_flag(c, "attention", a);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      runs.push_back(c);
    }
  }
  if (runs.empty()) throw UsageError("sweep needs --heads 1,2,4,8 and/or --attention scaled_dot,additive,multiplicative");
  for (auto& c : runs) {
    try {
      c.validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("setting heads={} attention={}: {}", c.heads,
                                   train::choice_name(kAttentions, c.attention), e.what()));
    }
  }
  return runs;
}

// Trains one setting of a sweep to its end, prints its row, and returns its loss curve.
Curve run_setting(const TrainConfig& c, const std::string& run) {
  Trainer trainer(c);
  // On a terminal, a progress bar over the run's steps stands where its row will be (train/plot/progress_bar.h).
  const std::int64_t steps = trainer.steps_per_epoch() * c.epochs;
  const std::string& attention = train::choice_name(kAttentions, c.attention);
  ProgressBar bar(stdout, fmt::format("{} heads={} {}", run, c.heads, attention), steps);
  const auto start = std::chrono::steady_clock::now();
  try {
    while (trainer.epochs_done() < c.epochs) {
      const std::int64_t before = trainer.epochs_done() * trainer.steps_per_epoch();
      trainer.run_epoch([&](std::int64_t done, std::int64_t, double loss) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        bar.update(before + done, loss, static_cast<double>(before + done) / std::max(s, 1e-9));
      });
    }
  } catch (...) {
    bar.finish();
    throw;
  }
  bar.finish();
  const FinalSummary s = summarize(trainer.history(), trainer.model().num_parameters());
  fmt::print("{:>5}  {:<15}  {:>7}  {:>10.4f}  {:>9}  {:>10}  {:>7.1f}s\n", c.heads, attention, s.params,
             trainer.history().back().loss, percent(s.test_seq_acc), s.epoch_99 > 0 ? std::to_string(s.epoch_99) : "-",
             s.train_wall_s);
  std::fflush(stdout);
  Curve curve{fmt::format("heads={} {}", c.heads, attention), {}};
  for (const auto& m : trainer.history()) curve.values.push_back(m.loss);
  return curve;
}

int cmd_sweep(int argc, char** argv) {
  cxxopts::Options o("cppgrad-reverse sweep", "Train one model per setting and compare them.");
  const std::set<std::string> lists = {"heads", "attention"};  // comma-separated: one run per combination
  train::add_config_flags(o, config_table(), lists);
  o.add_options("sweep")
      ("heads", "comma-separated head counts to compare, e.g. 1,2,4,8",
       cxxopts::value<std::string>()->default_value(std::to_string(TrainConfig{}.heads)))
      ("attention", "comma-separated cross-attention kinds to compare (scaled_dot,additive,multiplicative)",
       cxxopts::value<std::string>()->default_value(train::choice_name(kAttentions, TrainConfig{}.attention)))
      ("plot", "SVG of every run's loss curve", cxxopts::value<std::string>()->default_value("sweep.svg"))
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  check_outputs_or_usage_error({{"--plot", r["plot"].as<std::string>()}});
  TrainConfig base;
  train::apply_config_flags(r, config_table(), base, lists);
  const std::vector<TrainConfig> runs = sweep_runs(r, base);
  train::set_threads(base.threads);
  std::vector<Curve> curves;
  fmt::print("{:>5}  {:<15}  {:>7}  {:>10}  {:>9}  {:>10}  {:>8}\n", "heads", "attention", "params", "final loss",
             "greedy", "epochs→99%", "time");
  for (std::size_t i = 0; i < runs.size(); ++i)
    curves.push_back(run_setting(runs[i], fmt::format("run {}/{}", i + 1, runs.size())));
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
