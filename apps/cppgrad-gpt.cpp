// cppgrad-gpt: trains a decoder-only character model (GPT-2's architecture, nanoGPT's names) on text and samples
// from it.
//
//   cppgrad-gpt train     [flags]                          train on a word list (default) or any text
//   cppgrad-gpt sample    --checkpoint PATH [flags]        invent text, with a KV cache; --explain shows the choices
//   cppgrad-gpt eval      --checkpoint PATH [--data FILE]  loss and perplexity of a split or of a file
//   cppgrad-gpt attention --checkpoint PATH --prompt TEXT  every layer's and head's causal attention map
//
// Exit status: 0 on success, 2 on bad input (flags, values, files), 3 when training diverged (the loss became NaN or
// Inf; the last checkpoint stays), 130 / 143 when Ctrl-C / SIGTERM stopped training (saved with --save), 1 otherwise.
#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "cli/config_flags.h"
#include "cli/processes.h"
#include "cli/program.h"
#include "core/atomic_file.h"
#include "core/autograd.h"
#include "data/corpus_rows.h"
#include "data/utf8.h"
#include "gpt/trainer.h"
#include "nn/generate.h"
#include "train/lines_output.h"
#include "train/plot/attention_maps.h"
#include "train/plot/progress_bar.h"
#include "train/plot/terminal.h"
#include "train/stop.h"

using namespace cppgrad;
using namespace cppgrad::gpt;
using cli::flag_path;
using cli::flag_value;
using cli::UsageError;

namespace {

// ------------------------------------------------------------------------------------------- train
cxxopts::Options train_flags() {
  cxxopts::Options o("cppgrad-gpt train", "Train a GPT on text: next-character prediction, validation loss against "
                                          "the bigram baseline, samples at the end.");
  cli::add_config_flags(o, config_table());
  o.add_options("output")
      ("save", "checkpoint written at every evaluation, and when Ctrl-C or SIGTERM stops the run (atomically)",
       cxxopts::value<std::string>())
      ("resume", "continue a checkpoint (its config; flags you give must agree, --steps may grow)", cxxopts::value<std::string>())
      ("metrics-out", "JSON Lines: one object per evaluation, then a final one", cxxopts::value<std::string>())
      ("plot", "SVG of training and validation loss against steps", cxxopts::value<std::string>())
      ("samples", "samples printed at the end", cxxopts::value<std::string>()->default_value("12"))
      ("detect-anomaly", "stop at the first NaN/Inf in a forward result or gradient, naming the op and its line")
      ("quiet", "only the final summary")
      ("h,help", "this help");
  return o;
}

// The run's configuration: the defaults or the resumed checkpoint's, with the flags given; validated.
TrainConfig train_config(const cxxopts::ParseResult& r) {
  TrainConfig c;
  const bool resume = r.count("resume") > 0;
  if (resume) c = read_checkpoint_config(r["resume"].as<std::string>());
  cli::apply_config_flags(r, config_table(), c);
  if (!resume || r.count("data")) {  // stored absolute, so sample and eval find it from any directory
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(c.data, ec);
    if (!ec) c.data = absolute.string();
  }
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return c;
}

std::string ppl(double loss) { return fmt::format("{:.2f}", std::exp(loss)); }

// A sample as the user reads it: the boundary dropped, control characters shown as escapes.
std::string readable(const data::CharTokenizer& tok, const std::vector<std::int64_t>& ids) {
  std::string s;
  for (const std::int64_t id : ids) {
    const std::string c = tok.decode(id);
    s += c == "\n" ? "\\n" : c == "\t" ? "\\t" : c;
  }
  return s;
}

// Samples from a model: in lines mode, sequences from <b> to the next <b>; in text mode, a continuation of a newline
// (or of the first character of the vocabulary).
std::vector<std::vector<std::int64_t>> draw_samples(const nn::GPT& model, const data::CharTokenizer& tok,
                                                    std::int64_t count, std::int64_t max_new,
                                                    const nn::SamplingConfig& sampling,
                                                    const std::vector<std::int64_t>& prompt, Generator& gen,
                                                    const std::function<void(const nn::GenerateStep&)>& on_step = nullptr) {
  nn::GenerateOptions options{.max_new_tokens = max_new, .sampling = sampling,
                              .stop_token = tok.has_boundary() ? std::optional<std::int64_t>(0) : std::nullopt};
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t i = 0; i < count; ++i) out.push_back(nn::generate(model, prompt, options, gen, on_step));
  return out;
}

std::vector<std::int64_t> default_prompt(const data::CharTokenizer& tok) {
  if (tok.has_boundary()) return {0};
  if (const auto nl = tok.find(U'\n')) return {*nl};
  return {0};
}

// Where a training run writes, every path checked before anything is trained or written (train/outputs.h).
struct TrainOutputs {
  std::string save, plot, resume;
  std::optional<train::LinesOutput> metrics;
  bool quiet = false;
};

void open_outputs(const cxxopts::ParseResult& r, TrainOutputs& out) {
  out.save = flag_path(r, "save"), out.plot = flag_path(r, "plot"), out.resume = flag_path(r, "resume");
  out.quiet = r.count("quiet") > 0;
  std::vector<train::OutputFlag> outputs;
  for (const auto& [flag, stream] : {std::pair{"save", false}, {"metrics-out", true}, {"plot", false}})
    if (r.count(flag)) outputs.push_back({std::string("--") + flag, r[flag].as<std::string>(), stream});
  cli::check_outputs_or_usage_error(outputs, out.resume);
  if (r.count("metrics-out")) out.metrics.emplace(r["metrics-out"].as<std::string>(), train::LinesOutput::Kind::Whole);
}

void print_header(Trainer& t) {
  const data::TextCorpus& c = t.corpus();
  const std::string splits = std::visit([](const auto& s) {
    return fmt::format("{} {} train, {} validation", data::split_size(s, data::Split::train), data::split_unit(s),
                       data::split_size(s, data::Split::validation));
  }, c.splits);
  fmt::print("cppgrad-gpt: {} ({}): {} (seed {}); vocab {}{}; context {}; {} threads\n", t.config().data,
             train::choice_name(kFormats, t.config().format), splits, t.config().seed, c.tokenizer.size(),
             c.tokenizer.has_boundary() ? " (<b> and the characters)" : "", c.context, t.workers());
  fmt::print("model: GPT, {} parameters (d_model {}, {} layers, {} heads); {} tokens per step\n",
             t.model().num_parameters(), t.config().model.n_embd, t.config().model.n_layer, t.config().model.n_head,
             t.tokens_per_step());
  fmt::print("bigram baseline (counts, add-one smoothing): validation loss {:.4f} nats/token (perplexity {})\n",
             t.bigram_val_loss(), ppl(t.bigram_val_loss()));
  if (t.step() > 0) fmt::print("resumed at step {} of {}\n", t.step(), t.config().steps);
  std::fflush(stdout);
}

int stop_training(Trainer& t, const TrainOutputs& out) {
  return cli::stopped_by_signal("cppgrad-gpt",
                                fmt::format("stopped by {} after step {} of {}", train::stop_signal_name(), t.step(),
                                            t.config().steps),
                                out.save, [&](const std::string& path) { t.save(path); });
}

int cmd_train(int argc, char** argv) {
  cxxopts::Options o = train_flags();
  const auto r = cli::parse_flags(o, argc, argv);
  const TrainConfig config = train_config(r);
  const std::int64_t samples = flag_value<std::int64_t>(r, "samples");
  if (samples < 0 || samples > 1000) throw UsageError("--samples must be in 0..1000");
  // Under mpirun: every process trains its block of each batch's shards; rank 0 alone writes and prints.
  const std::unique_ptr<train::ProcessLink> processes = cli::join_processes("cppgrad-gpt");
  const bool rank0 = !processes || processes->rank() == 0;
  TrainOutputs out;
  if (rank0) open_outputs(r, out);
  else out.quiet = true, out.resume = flag_path(r, "resume");
  cli::set_threads(config.threads);
  if (config.data == kDefaultData && !std::filesystem::exists(config.data))
    throw UsageError(fmt::format("the default data {} is missing: install Debian's word list (sudo apt-get install "
                                 "wamerican, or bash .ci/install-deps.sh), or give --data FILE", kDefaultData));
  Trainer t(config, processes.get());  // reads the data: an unreadable or invalid file is a usage error (exit 2)
  if (!out.resume.empty()) t.load(out.resume);
  if (t.step() >= config.steps && !out.resume.empty())
    throw UsageError(fmt::format("--resume {}: the checkpoint has trained {} steps already and --steps is {}: nothing "
                                 "to do (give --steps above {} to train further)", out.resume, t.step(), config.steps,
                                 t.step()));
  if (!out.quiet) print_header(t);

  train::ProgressBar bar(stdout, "step", config.steps, "tokens/s");
  const auto on_step = [&](std::int64_t step, double loss, double tokens_per_s) {
    if (!out.quiet) bar.update(step, loss, tokens_per_s);
  };
  const auto on_eval = [&](const Evaluation& e) {
    bar.finish();
    if (!out.quiet)
      fmt::print("step {:>6}/{}  train {:.4f}  val {:.4f} (perplexity {})  lr {:.2e}  {:.0f} tokens/s\n", e.step,
                 config.steps, e.train_loss, e.val_loss, ppl(e.val_loss), e.lr, e.tokens_per_s);
    std::fflush(stdout);
    if (out.metrics) out.metrics->write(metrics_jsonl(t.history(), nullptr));
    if (!out.plot.empty()) write_file_atomically(out.plot, loss_chart(t.history(), t.bigram_val_loss(), "cppgrad-gpt"));
    if (!out.save.empty()) t.save(out.save);
  };
  std::optional<DetectAnomalyGuard> anomaly;
  if (r.count("detect-anomaly")) anomaly.emplace();
  train::catch_stop_signals();  // from here Ctrl-C and SIGTERM stop at the next step boundary (train/stop.h)
  try {
    t.run(on_step, on_eval, [&] { return cli::stop_requested(processes.get()); });
  } catch (const train::TrainingStopped&) {
    bar.finish();
    if (!rank0) return train::stop_status();  // rank 0 saves and says how to resume
    return stop_training(t, out);
  } catch (...) {
    bar.finish();
    throw;
  }
  const FinalSummary final{.val_loss = t.history().back().val_loss, .bigram_val_loss = t.bigram_val_loss(),
                           .steps = t.step(), .params = t.model().num_parameters(),
                           .train_wall_s = t.history().back().elapsed_s};
  if (!rank0) return 0;
  if (out.metrics) out.metrics->write(metrics_jsonl(t.history(), &final));
  fmt::print("done: {} steps, validation loss {:.4f} nats/token (perplexity {}) against the bigram's {:.4f}; {:.1f}s "
             "training\n", final.steps, final.val_loss, ppl(final.val_loss), final.bigram_val_loss, final.train_wall_s);
  if (samples > 0) {
    Generator gen(config.seed);
    const auto drawn = draw_samples(t.model(), t.corpus().tokenizer, samples, t.corpus().context - 1, {},
                                    default_prompt(t.corpus().tokenizer), gen);
    std::string line;
    for (const auto& s : drawn) line += (line.empty() ? "" : t.corpus().tokenizer.has_boundary() ? " " : "\n") +
                                        readable(t.corpus().tokenizer, s);
    fmt::print("samples: {}\n", line);
  }
  return 0;
}

// ------------------------------------------------------------------------------------------- sample
// The checkpoint named by --checkpoint, loaded, or a usage error saying the flag is missing.
LoadedModel checkpoint_flag(const cxxopts::ParseResult& r, const char* command) {
  if (!r.count("checkpoint")) throw UsageError(fmt::format("{} needs --checkpoint PATH (written by train --save)", command));
  return load_model(r["checkpoint"].as<std::string>());
}

// A prompt's tokens; a character outside the vocabulary is a usage error naming it.
std::vector<std::int64_t> prompt_tokens(const data::CharTokenizer& tok, const std::string& text) {
  try {
    return tok.encode(data::decode_utf8(text));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--prompt: ") + e.what());
  }
}

std::string choices_str(const data::CharTokenizer& tok, const std::vector<nn::TokenChoice>& choices) {
  std::string s;
  for (const auto& c : choices) {
    if (c.prob <= 0) continue;  // fewer than five survived the filters
    const std::string t = tok.decode(c.id);
    s += fmt::format("  {:>5} {:.3f}", t.empty() ? "<b>" : t == "\n" ? "\\n" : t == " " ? "' '" : t, c.prob);
  }
  return s;
}

int cmd_sample(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt sample", "Invent text with a trained model (a KV cache makes each token one step).");
  o.add_options()("checkpoint", "checkpoint written by train --save", cxxopts::value<std::string>())
      ("num", "samples", cxxopts::value<std::string>()->default_value("10"))
      ("max-new-tokens", "tokens per sample at most (0: the context)", cxxopts::value<std::string>()->default_value("0"))
      ("temperature", "divides the logits: 0 greedy, below 1 surer, above 1 wilder", cxxopts::value<std::string>()->default_value("1"))
      ("top-k", "keep the k likeliest tokens (0: all)", cxxopts::value<std::string>()->default_value("0"))
      ("top-p", "keep the likeliest tokens whose probabilities sum to p (1: all)", cxxopts::value<std::string>()->default_value("1"))
      ("prompt", "text the samples continue (lines mode: the start of a line)", cxxopts::value<std::string>()->default_value(""))
      ("seed", "seed of the draws", cxxopts::value<std::string>()->default_value("0"))
      ("explain", "for every token: the five likeliest next tokens before and after temperature and the filters")
      ("h,help", "this help");
  const auto r = cli::parse_flags(o, argc, argv);
  const std::int64_t num = flag_value<std::int64_t>(r, "num"), max_new = flag_value<std::int64_t>(r, "max-new-tokens");
  const nn::SamplingConfig sampling{.temperature = flag_value<double>(r, "temperature"),
                                    .top_k = flag_value<std::int64_t>(r, "top-k"),
                                    .top_p = flag_value<double>(r, "top-p")};
  const std::uint64_t seed = flag_value<std::uint64_t>(r, "seed");
  if (num < 1 || num > 100000) throw UsageError("--num must be in 1..100000");
  if (max_new < 0 || max_new > 1'000'000) throw UsageError("--max-new-tokens must be in 0..1000000");
  try {
    nn::check_sampling(sampling);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const LoadedModel m = checkpoint_flag(r, "sample");
  std::vector<std::int64_t> prompt = default_prompt(m.tokenizer);
  const std::string prompt_text = r["prompt"].as<std::string>();
  if (!prompt_text.empty()) {
    const auto ids = prompt_tokens(m.tokenizer, prompt_text);
    if (m.tokenizer.has_boundary()) prompt.insert(prompt.end(), ids.begin(), ids.end());
    else prompt = ids;
  }
  if (std::ssize(prompt) >= m.context && m.tokenizer.has_boundary())
    throw UsageError(fmt::format("--prompt has {} characters; this model's lines hold at most {}", prompt.size() - 1,
                                 m.context - 1));
  const std::int64_t limit = max_new > 0 ? max_new : m.context - (m.tokenizer.has_boundary() ? std::ssize(prompt) : 0);
  Generator gen(seed);
  const bool explain = r.count("explain") > 0;
  const auto on_step = [&](const nn::GenerateStep& s) {
    if (!explain) return;
    const std::string t = m.tokenizer.decode(s.token);
    fmt::print("  -> {:<5} model:{}\n        after filters:{}\n", t.empty() ? "<b>" : t, choices_str(m.tokenizer, s.raw_top),
               choices_str(m.tokenizer, s.filtered_top));
  };
  const auto drawn = draw_samples(*m.model, m.tokenizer, num, limit, sampling, prompt, gen, on_step);
  std::vector<std::string> words;
  for (const auto& s : drawn) {
    words.push_back(prompt_text + readable(m.tokenizer, s));
    fmt::print("{}\n", words.back());
  }
  if (!m.tokenizer.has_boundary()) return 0;
  // Lines mode: how many samples are lines of the training split, of the validation split, or new.
  try {
    const data::TextCorpus corpus = read_corpus(m.config, m.context);
    if (corpus.tokenizer.vocab() != m.tokenizer.vocab()) throw std::runtime_error("the vocabulary differs");
    std::set<std::string> train_set, val_set;
    const data::Lines& lines = std::get<data::Lines>(corpus.splits);  // a tokenizer with <b>: a corpus of lines
    for (const auto& l : lines.train) train_set.insert(readable(m.tokenizer, l));
    for (const auto& l : lines.val) val_set.insert(readable(m.tokenizer, l));
    std::int64_t in_train = 0, in_val = 0;
    for (const auto& w : words) in_train += train_set.count(w) > 0, in_val += !train_set.count(w) && val_set.count(w);
    fmt::print("{} samples: {} are lines of the training split, {} of the validation split (never trained on), {} new\n",
               words.size(), in_train, in_val, std::ssize(words) - in_train - in_val);
  } catch (const std::exception& e) {
    fmt::print("(cannot tell which samples are in the data: {}: {})\n", m.config.data, e.what());
  }
  return 0;
}

// ------------------------------------------------------------------------------------------- eval
int cmd_eval(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt eval", "Loss and perplexity of a checkpoint on its validation split or on a file.");
  o.add_options()("checkpoint", "checkpoint written by train --save", cxxopts::value<std::string>())
      ("data", "a file to score (its lines, or its text in windows of the context); default: the validation split",
       cxxopts::value<std::string>())
      ("metrics-out", "JSON Lines: {\"event\": \"eval\", \"loss\", \"perplexity\", \"tokens\"}", cxxopts::value<std::string>())
      ("threads", "threads (0: OpenMP's default)", cxxopts::value<std::string>()->default_value("0"))
      ("h,help", "this help");
  const auto r = cli::parse_flags(o, argc, argv);
  const std::int64_t threads = flag_value<std::int64_t>(r, "threads");
  if (threads < 0 || threads > kMaxThreads) throw UsageError(fmt::format("--threads must be in 0..{}", kMaxThreads));
  std::optional<train::LinesOutput> metrics;
  if (r.count("metrics-out")) {
    cli::check_outputs_or_usage_error({{"--metrics-out", r["metrics-out"].as<std::string>(), true}});
    metrics.emplace(r["metrics-out"].as<std::string>(), train::LinesOutput::Kind::Whole);
  }
  cli::set_threads(threads);
  const LoadedModel m = checkpoint_flag(r, "eval");
  data::TextCorpus corpus;
  std::string what;
  if (r.count("data")) {
    const std::string path = r["data"].as<std::string>();
    corpus = data::make_text_corpus(data::read_text_file(path),
                                    {.format = m.config.format, .context = m.context, .val_fraction = 0, .seed = 0}, m.tokenizer);
    what = path;
  } else {
    corpus = read_corpus(m.config, m.context);
    if (corpus.tokenizer.vocab() != m.tokenizer.vocab())
      throw std::runtime_error(m.config.data + " gives another vocabulary than the checkpoint's (has it changed?)");
    what = "the validation split of " + m.config.data;
  }
  const SplitLoss l = split_loss(*m.model, corpus, /*validation=*/true);
  fmt::print("checkpoint {} (step {}): loss {:.4f} nats/token, perplexity {}, over {} tokens of {}\n",
             r["checkpoint"].as<std::string>(), m.steps_done, l.loss, ppl(l.loss), l.tokens, what);
  if (metrics)
    metrics->write(fmt::format("{{\"event\": \"eval\", \"loss\": {}, \"perplexity\": {}, \"tokens\": {}}}\n", l.loss,
                               std::exp(l.loss), l.tokens));
  return 0;
}

// ------------------------------------------------------------------------------------------- attention
int cmd_attention(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt attention", "Every layer's and head's causal attention over a prompt.");
  o.add_options()("checkpoint", "checkpoint written by train --save", cxxopts::value<std::string>())
      ("prompt", "the text to read", cxxopts::value<std::string>())
      ("svg", "SVG of every layer's and head's map", cxxopts::value<std::string>()->default_value("attention.svg"))
      ("no-color", "plain characters only in the heatmap")
      ("h,help", "this help");
  const auto r = cli::parse_flags(o, argc, argv);
  if (!r.count("prompt")) throw UsageError("attention needs --prompt TEXT");
  const std::string svg = r["svg"].as<std::string>();
  cli::check_outputs_or_usage_error({{"--svg", svg}});
  const LoadedModel m = checkpoint_flag(r, "attention");
  std::vector<std::int64_t> ids = prompt_tokens(m.tokenizer, r["prompt"].as<std::string>());
  if (m.tokenizer.has_boundary()) ids.insert(ids.begin(), 0);
  if (ids.empty()) throw UsageError("--prompt is empty");
  if (std::ssize(ids) > m.context)
    throw UsageError(fmt::format("--prompt has {} tokens; the model reads at most {}", ids.size(), m.context));
  {
    NoGradGuard no_grad;
    Tensor idx = Tensor::zeros({1, std::ssize(ids)}, DType::Int64);
    for (std::size_t i = 0; i < ids.size(); ++i) idx.data<std::int64_t>()[i] = ids[i];
    m.model->forward(idx);
  }
  std::vector<std::string> labels;
  for (const std::int64_t id : ids) {
    const std::string t = m.tokenizer.decode(id);
    labels.push_back(t.empty() ? "<b>" : t == " " ? "␣" : t == "\n" ? "\\n" : t);
  }
  std::vector<train::AttentionPanel> panels;
  const auto maps = m.model->attention_maps();  // per layer [1, nh, T, T]
  std::vector<std::vector<double>> mean_last(ids.size(), std::vector<double>(ids.size(), 0.0));
  for (std::size_t layer = 0; layer < maps.size(); ++layer) {
    const Tensor w = maps[layer].select(0, 0);  // [nh, T, T]
    const std::int64_t H = w.shape()[0];
    for (std::int64_t h = 0; h < H; ++h) {
      train::AttentionPanel p{fmt::format("layer {} head {}", layer, h), {}};
      for (std::size_t i = 0; i < ids.size(); ++i) {
        p.weights.emplace_back();
        for (std::size_t j = 0; j < ids.size(); ++j) {
          const double v = w.at({h, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)});
          p.weights.back().push_back(v);
          if (layer + 1 == maps.size()) mean_last[i][j] += v / static_cast<double>(H);
        }
      }
      panels.push_back(std::move(p));
    }
  }
  fmt::print("last layer's attention (mean over heads): rows = the position reading, columns = what it reads\n");
  std::cout << train::terminal_heatmap(mean_last, labels, labels,
                                       !r.count("no-color") && train::ProgressBar::is_terminal(stdout));
  write_file_atomically(svg, train::attention_maps_svg(panels, labels, labels,
                                                       "cppgrad-gpt: causal attention of " + r["prompt"].as<std::string>()));
  fmt::print("wrote {} attention maps ({} layers x {} heads) to {}\n", panels.size(), maps.size(),
             panels.size() / std::max<std::size_t>(1, maps.size()), svg);
  return 0;
}

const char* kUsage =
    "usage: cppgrad-gpt <command> [flags]   (cppgrad-gpt <command> --help for its flags)\n"
    "       cppgrad-gpt --version\n\n"
    "  train      train a character-level GPT (default: Debian's word list /usr/share/dict/american-english,\n"
    "             d_model 64, 4 layers, 4 heads, batch 32, AdamW 5e-4, 2000 steps, seed 0)\n"
    "  sample     invent text with a trained model (--temperature, --top-k, --top-p, --explain)\n"
    "  eval       loss and perplexity on the validation split or a file\n"
    "  attention  every layer's and head's causal attention map over a prompt (SVG and terminal)\n";

}  // namespace

int main(int argc, char** argv) {
  return cli::run_program("cppgrad-gpt", argc, argv, kUsage,
                          {{"train", cmd_train}, {"sample", cmd_sample}, {"eval", cmd_eval}, {"attention", cmd_attention}},
                          "smaller --d-model, --layers, --batch-size or --context need less");
}
