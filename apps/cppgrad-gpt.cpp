// cppgrad-gpt: trains a decoder-only character model (GPT-2's architecture, nanoGPT's names) on text and samples
// from it.
//
//   cppgrad-gpt train     [flags]                          train on a word list (default) or any text
//   cppgrad-gpt sample    --checkpoint PATH [flags]        invent text, with a KV cache; --explain shows the choices
//   cppgrad-gpt eval      --checkpoint PATH [--data FILE]  loss and perplexity of a split or of a file
//   cppgrad-gpt attention --checkpoint PATH --prompt TEXT  every layer's and head's causal attention map
//   cppgrad-gpt tokenize  encode|decode|train [flags]      text to token ids and back; train a BPE (gpt/tokenize.h)
//   cppgrad-gpt import    --hf FILE --out CKPT [flags]     GPT-2 in Hugging Face's layout to a checkpoint, and
//   cppgrad-gpt export    --checkpoint CKPT --out FILE     back (gpt/hf_commands.h)
//
// Exit status: 0 on success, 2 on bad input (flags, values, files), 3 when training diverged (the loss became NaN or
// Inf; the last checkpoint stays), 130 / 143 when Ctrl-C / SIGTERM stopped training (saved with --save), 1 otherwise.
#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <map>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "apps/cli/processes.h"
#include "data/token_labels.h"
#include "core/atomic_file.h"
#include "core/message_text.h"
#include "data/corpus_rows.h"
#include "data/utf8.h"
#include "models/gpt/attention.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/framing.h"
#include "apps/gpt/hf_commands.h"
#include "models/gpt/preset.h"
#include "models/gpt/prompt.h"
#include "apps/gpt/tokenize.h"
#include "models/gpt/trainer.h"
#include "nn/generate.h"
#include "train/cli.h"
#include "train/cli_flags.h"
#include "train/cli_outputs.h"
#include "train/lines_output.h"
#include "train/plot/attention_maps.h"
#include "train/plot/progress_bar.h"
#include "train/plot/terminal.h"
#include "train/stop.h"

using namespace cppgrad;
using namespace cppgrad::gpt;
using train::flag_path;
using train::flag_value;
using train::UsageError;

namespace {

// ------------------------------------------------------------------------------------------- train
cxxopts::Options train_flags() {
  cxxopts::Options o("cppgrad-gpt train", "Train a GPT on text: next-token prediction (characters, GPT-2's BPE or "
                                          "your own), validation loss against the bigram baseline, samples at the end.");
  train::add_config_flags(o, config_table());
  train::add_output_flags(o, {.save = "checkpoint written at every evaluation, and when Ctrl-C or SIGTERM stops the run "
                                    "(atomically)",
                            .resume = "continue a checkpoint (its config; flags you give must agree, --steps may grow)",
                            .metrics = "JSON Lines: one object per evaluation, then a final one",
                            .plot = "SVG of training and validation loss against steps"});
  o.add_options("output")("samples", "samples printed at the end", cxxopts::value<std::string>()->default_value("12"));
  // Not config rows: each sets rows (gpt/preset.h), and the checkpoint stores those, not where they came from.
  o.add_options("model")("preset", "GPT-2's shape: --d-model, --heads, --layers, --context 1024, --tokenizer gpt2, "
                                   "--format text; flags given with it must agree. " + presets_help(),
                         cxxopts::value<std::string>())
      ("init", "finetune: start from a checkpoint's weights (train --save or import) with a fresh AdamW at step 0; "
               "its shape and tokenizer are the run's (flags given must agree)", cxxopts::value<std::string>());
  train::add_run_flags(o);
  return o;
}

// The config rows typed on the command line.
std::set<std::string> given_flags(const cxxopts::ParseResult& r) {
  std::set<std::string> given;
  for (const auto& row : config_table().rows())
    if (r.count(row.flag)) given.insert(row.flag);
  return given;
}

// The run's configuration: the defaults or the resumed checkpoint's, with the flags given, then the shape of
// --preset or of the --init checkpoint (flags must agree: gpt/preset.h); validated.
TrainConfig train_config(const cxxopts::ParseResult& r, const GptCheckpoint* init) {
  TrainConfig c;
  const bool resume = r.count("resume") > 0;
  if (resume && init) throw UsageError("--init starts a new run from a checkpoint's weights, --resume continues one: "
                                       "give one of them");
  if (resume) c = read_checkpoint_config(r["resume"].as<std::string>());
  train::apply_config_flags(r, config_table(), c);
  try {
    if (r.count("preset")) {
      const std::string name = r["preset"].as<std::string>();
      pin_shape(c, preset_config(name), given_flags(r), "--preset " + name);
    }
    if (init) {
      TrainConfig shape = init->config;
      shape.context = init->model.block_size;  // (a lines run may have stored --context 0: its longest line)
      const std::string source = "--init " + r["init"].as<std::string>();
      std::set<std::string> given = given_flags(r);
      if (r.count("preset")) {  // the preset's must agree too
        const std::vector<std::string> preset_sets = shape_flags();
        given.insert(preset_sets.begin(), preset_sets.end());
      }
      pin_shape(c, shape, given, source);
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  c = c.with_shards();  // a resumed run keeps its checkpoint's
  if (!resume || r.count("data")) c.data = absolute_path(c.data);
  if (c.tokenizer.kind == data::TokenizerName::Kind::bpe_file) c.tokenizer.path = absolute_path(c.tokenizer.path);
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return c;
}

std::string ppl(double loss) { return fmt::format("{:.2f}", std::exp(loss)); }

// `count` samples from a model, each from `start` until the stop token (a lines model's <b>) or max_new tokens.
std::vector<std::vector<std::int64_t>> draw_samples(const nn::GPT& model, std::optional<std::int64_t> stop_token,
                                                    std::int64_t count, std::int64_t max_new,
                                                    const nn::SamplingConfig& sampling,
                                                    const std::vector<std::int64_t>& start, Generator& gen,
                                                    const std::function<void(const nn::GenerateStep&)>& on_step = nullptr) {
  nn::GenerateOptions options{.max_new_tokens = max_new, .sampling = sampling, .stop_token = stop_token};
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t i = 0; i < count; ++i) out.push_back(nn::generate(model, start, options, gen, on_step));
  return out;
}

void print_header(Trainer& t) {
  const data::TextCorpus& c = t.corpus();
  const std::string splits = std::visit([&](const auto& s) {
    return fmt::format("{} {} train, {} validation", data::split_size(s, data::Split::train),
                       c.tokenizer.chars() ? data::split_unit(s) : "tokens", data::split_size(s, data::Split::validation));
  }, c.splits);
  const std::string vocab = c.tokenizer.chars() ? std::to_string(c.tokenizer.size())
                                                : fmt::format("{} ({})", c.tokenizer.size(), t.config().tokenizer.text());
  fmt::print("cppgrad-gpt: {} ({}): {} (seed {}); vocab {}{}; context {}; {} threads\n", t.config().data,
             choice_name(kFormats, t.config().format), splits, t.config().seed, vocab,
             std::visit([](const auto& f) { return f.vocab_note(); }, framing_of(c.tokenizer)), c.context, t.workers());
  fmt::print("model: GPT, {} parameters (d_model {}, {} layers, {} heads); {} tokens per step\n",
             t.model().num_parameters(), t.config().model.n_embd, t.config().model.n_layer, t.config().model.n_head,
             t.tokens_per_step());
  fmt::print("bigram baseline (counts, add-one smoothing): validation loss {:.4f} nats/token (perplexity {})\n",
             t.bigram_val_loss(), ppl(t.bigram_val_loss()));
  if (t.step() > 0) fmt::print("resumed at step {} of {}\n", t.step(), t.config().steps);
  std::fflush(stdout);
}

int stop_training(Trainer& t, const train::TrainOutputs& out) {
  return train::stopped_by_signal("cppgrad-gpt",
                                fmt::format("stopped by {} after step {} of {}", train::stop_signal_name(), t.step(),
                                            t.config().steps),
                                out.save, [&](const std::string& path) { t.save(path); });
}

// Trains to --steps: a progress bar, a line per evaluation, and every output written at each evaluation. Returns
// false when Ctrl-C or SIGTERM stopped the run.
bool run_training(Trainer& t, train::TrainOutputs& out, train::ProcessLink* processes) {
  train::ProgressBar bar(stdout, "step", t.config().steps, "tokens/s");
  const auto on_step = [&](std::int64_t step, double loss, double tokens_per_s) {
    if (!out.quiet) bar.update(step, loss, tokens_per_s);
  };
  const auto on_eval = [&](const Evaluation& e) {
    bar.finish();
    if (!out.quiet)
      fmt::print("step {:>6}/{}  train {:.4f}  val {:.4f} (perplexity {}, {:.3f} bits/byte)  lr {:.2e}  {:.0f} tokens/s\n",
                 e.step, t.config().steps, e.train_loss, e.val_loss, ppl(e.val_loss), e.val_bpb, e.lr, e.tokens_per_s);
    std::fflush(stdout);
    if (out.metrics) out.metrics->write(metrics_jsonl(t.history(), nullptr));
    if (!out.plot.empty()) write_file_atomically(out.plot, loss_chart(t.history(), t.bigram_val_loss(), "cppgrad-gpt"));
    if (!out.save.empty()) t.save(out.save);
  };
  train::catch_stop_signals();  // from here Ctrl-C and SIGTERM stop at the next step boundary (train/stop.h)
  try {
    t.run(on_step, on_eval, [&] { return cli::stop_requested(processes); });
  } catch (const train::TrainingStopped&) {
    bar.finish();
    return false;
  } catch (...) {
    bar.finish();
    throw;
  }
  return true;
}

// The samples a run prints at its end: lines on one line, a space between two; a running text as it is, a blank
// line between two.
std::string samples_block(const data::Lines&, const std::vector<std::string>& texts) {
  std::string s;
  for (const std::string& t : texts) s += " " + t;
  return s;
}

std::string samples_block(const data::RunningText&, const std::vector<std::string>& texts) {
  std::string s;
  for (std::size_t i = 0; i < texts.size(); ++i) s += (i == 0 ? "\n" : "\n\n") + texts[i];
  return s;
}

void print_final(Trainer& t, train::TrainOutputs& out, std::int64_t samples) {
  const FinalSummary final{.val_loss = t.history().back().val_loss, .val_bpb = t.history().back().val_bpb,
                           .bigram_val_loss = t.bigram_val_loss(),
                           .steps = t.step(), .params = t.model().num_parameters(),
                           .train_wall_s = t.history().back().elapsed_s};
  if (out.metrics) out.metrics->write(metrics_jsonl(t.history(), &final));
  fmt::print("done: {} steps, validation loss {:.4f} nats/token (perplexity {}, {:.3f} bits/byte) against the bigram's "
             "{:.4f}; {:.1f}s training\n", final.steps, final.val_loss, ppl(final.val_loss), final.val_bpb,
             final.bigram_val_loss, final.train_wall_s);
  if (samples == 0) return;
  Generator gen(t.config().seed);
  const data::Tokenizer& tok = t.corpus().tokenizer;
  const auto [stop, start] = std::visit([](const auto& f) { return std::pair(f.stop_token(), f.sample_start({})); },
                                        framing_of(tok));
  std::vector<std::string> texts;
  nn::EvalModeGuard eval(t.model());  // sampling applies no dropout
  for (const auto& s : draw_samples(t.model(), stop, samples, t.corpus().context - 1, {}, start, gen))
    texts.push_back(data::token_text(tok, s));
  fmt::print("samples:{}\n", std::visit([&](const auto& s) { return samples_block(s, texts); }, t.corpus().splits));
}

// --init's checkpoint; a Hugging Face file (no cppgrad-gpt format) is refused saying how to convert it.
GptCheckpoint read_init(const std::string& path) {
  try {
    return read_gpt_checkpoint(path);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.find("not a cppgrad-gpt checkpoint") == std::string::npos) throw;
    throw std::runtime_error(fmt::format("--init {}: not a cppgrad-gpt checkpoint (a Hugging Face model.safetensors "
                                         "becomes one with: cppgrad-gpt import --hf {} --out CKPT)", path, path));
  }
}

int cmd_train(int argc, char** argv) {
  cxxopts::Options o = train_flags();
  const auto r = train::parse_flags(o, argc, argv);
  // --init's checkpoint, read once: its shape for the config, its weights for the model.
  std::optional<GptCheckpoint> init;
  if (r.count("init")) init = read_init(flag_path(r, "init"));
  const TrainConfig config = train_config(r, init ? &*init : nullptr);
  const std::int64_t samples = flag_value<std::int64_t>(r, "samples");
  if (samples < 0 || samples > 1000) throw UsageError("--samples must be in 0..1000");
  // Under mpirun: every process trains its block of each batch's shards; rank 0 alone writes and prints.
  const std::unique_ptr<train::ProcessLink> processes = cli::join_processes("cppgrad-gpt");
  const bool rank0 = !processes || processes->rank() == 0;
  train::TrainOutputs out;
  // What the run reads stays as it is: no output may name the data, the tokenizer's file or --init's checkpoint.
  std::vector<train::InputFlag> inputs = {{"--data", config.data}};
  if (config.tokenizer.kind == data::TokenizerName::Kind::bpe_file) inputs.push_back({"--tokenizer", config.tokenizer.path});
  if (r.count("init")) inputs.push_back({"--init", flag_path(r, "init")});
  train::open_train_outputs(r, rank0, out, {}, inputs);
  train::set_threads(config.threads);
  if (config.data == kDefaultData && !std::filesystem::exists(config.data))
    throw UsageError(fmt::format("the default data {} is missing: install Debian's word list (sudo apt-get install "
                                 "wamerican, or bash .ci/install-deps.sh), or give --data FILE", kDefaultData));
  // Resumed without --tokenizer, a bpe:FILE run reads its text through the checkpoint's BPE: the file may be gone.
  // So does a run that finetunes one: the checkpoint's BPE is the model's.
  std::optional<data::Tokenizer> resumed_bpe;
  if (!out.resume.empty() && !r.count("tokenizer") && config.tokenizer.kind == data::TokenizerName::Kind::bpe_file)
    resumed_bpe = read_gpt_checkpoint(out.resume).tokenizer;
  if (init && init->tokenizer.bpe()) resumed_bpe = init->tokenizer;
  // Reads the data: an unreadable or invalid file is a usage error (exit 2), naming where its path came from.
  Trainer t(config, processes.get(), resumed_bpe ? &*resumed_bpe : nullptr,
            !out.resume.empty() && !r.count("data") ? kCheckpointData : kDataFlag);
  if (!out.resume.empty()) t.load(out.resume);
  if (init) {
    t.init_from(*init, flag_path(r, "init"));
    init.reset();  // its tensors are the model's now
  }
  if (t.step() >= config.steps && !out.resume.empty())
    throw UsageError(fmt::format("--resume {}: the checkpoint has trained {} steps already and --steps is {}: nothing "
                                 "to do (give --steps above {} to train further)", out.resume, t.step(), config.steps,
                                 t.step()));
  if (!out.quiet) print_header(t);
  if (!run_training(t, out, processes.get()))
    return rank0 ? stop_training(t, out) : train::stop_status();  // rank 0 saves and says how to resume
  if (rank0) print_final(t, out, samples);
  return 0;
}

// ------------------------------------------------------------------------------------------- sample
// The checkpoint named by --checkpoint, loaded, or a usage error saying the flag is missing.
LoadedModel checkpoint_flag(const cxxopts::ParseResult& r, const char* command) {
  if (!r.count("checkpoint")) throw UsageError(fmt::format("{} needs --checkpoint PATH (written by train --save)", command));
  return load_model(r["checkpoint"].as<std::string>());
}

// The five likeliest next tokens of an --explain line, with their probabilities.
std::string choices_str(const data::Tokenizer& tok, const std::vector<nn::TokenChoice>& choices) {
  std::string s;
  for (const auto& c : choices)
    if (c.prob > 0) s += fmt::format("  {:>5} {:.3f}", data::token_label(tok, c.id), c.prob);  // fewer may survive
  return s;
}

struct SampleFlags {
  std::string checkpoint;
  std::int64_t num = 0, max_new = 0;
  nn::SamplingConfig sampling;
  std::uint64_t seed = 0;
  std::string prompt;
  bool explain = false;
};

SampleFlags sample_flags(int argc, char** argv) {
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
  const auto r = train::parse_flags(o, argc, argv);
  SampleFlags f{.checkpoint = flag_path(r, "checkpoint"), .num = flag_value<std::int64_t>(r, "num"), .max_new = flag_value<std::int64_t>(r, "max-new-tokens"),
                .sampling = {.temperature = flag_value<double>(r, "temperature"),
                             .top_k = flag_value<std::int64_t>(r, "top-k"),
                             .top_p = flag_value<double>(r, "top-p")},
                .seed = flag_value<std::uint64_t>(r, "seed"), .prompt = r["prompt"].as<std::string>(),
                .explain = r.count("explain") > 0};
  if (f.num < 1 || f.num > 100000) throw UsageError("--num must be in 1..100000");
  if (f.max_new < 0 || f.max_new > 1'000'000) throw UsageError("--max-new-tokens must be in 0..1000000");
  try {
    nn::check_sampling(f.sampling);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (f.checkpoint.empty()) throw UsageError("sample needs --checkpoint PATH (written by train --save)");
  return f;
}

// A lines model's samples against its data: how many are lines of the training split, of the validation split, or
// new (a running text's continuations are neither: nothing to say).
void print_origins(const data::Lines& lines, const LoadedModel& m, const std::vector<std::string>& words) {
  std::set<std::string> train_set, val_set;
  for (const auto& l : lines.train) train_set.insert(data::token_text(m.tokenizer, l));
  for (const auto& l : lines.val) val_set.insert(data::token_text(m.tokenizer, l));
  std::int64_t in_train = 0, in_val = 0;
  for (const auto& w : words) in_train += train_set.count(w) > 0, in_val += !train_set.count(w) && val_set.count(w);
  fmt::print("{} samples: {} are lines of the training split, {} of the validation split (never trained on), {} new\n",
             words.size(), in_train, in_val, std::ssize(words) - in_train - in_val);
}

void print_origins(const data::RunningText&, const LoadedModel&, const std::vector<std::string>&) {}

// A lines model's samples are judged against its data (the file re-read); a running text's are not.
void report_origins(const LinesFraming&, const LoadedModel& m, const std::vector<std::string>& words) {
  try {
    const data::TextCorpus corpus = read_corpus(m.config, m.context, m.tokenizer);
    std::visit([&](const auto& s) { print_origins(s, m, words); }, corpus.splits);
  } catch (const std::exception& e) {
    fmt::print("(cannot tell which samples are in the data: {})\n", message_line(e.what()));  // it names the file
  }
}
void report_origins(const TextFraming&, const LoadedModel&, const std::vector<std::string>&) {}

template <class Framing>
void print_samples(const Framing& framing, const SampleFlags& f, const LoadedModel& m) {
  const std::vector<std::int64_t> start = gpt::sample_start(m.tokenizer, f.prompt, m.context, "--prompt");
  const std::int64_t limit = f.max_new > 0 ? f.max_new : framing.default_room(m.context, std::ssize(start));
  Generator gen(f.seed);
  const auto on_step = [&](const nn::GenerateStep& s) {
    if (!f.explain) return;
    fmt::print("  -> {:<5} model:{}\n        after filters:{}\n", data::token_label(m.tokenizer, s.token),
               choices_str(m.tokenizer, s.raw_top), choices_str(m.tokenizer, s.filtered_top));
  };
  std::vector<std::string> words;  // each sample as it is, then a newline (a line) or a blank line (a running text)
  for (const auto& s : draw_samples(*m.model, framing.stop_token(), f.num, limit, f.sampling, start, gen, on_step)) {
    words.push_back(f.prompt + data::token_text(m.tokenizer, s));
    fmt::print("{}{}", words.back(), framing.after_sample());
  }
  report_origins(framing, m, words);
}

int cmd_sample(int argc, char** argv) {
  const SampleFlags f = sample_flags(argc, argv);
  const LoadedModel m = load_model(f.checkpoint);
  std::visit([&](const auto& framing) { print_samples(framing, f, m); }, framing_of(m.tokenizer));
  return 0;
}

// ------------------------------------------------------------------------------------------- eval
int cmd_eval(int argc, char** argv) {
  cxxopts::Options o("cppgrad-gpt eval", "Loss and perplexity of a checkpoint on its validation split or on a file.");
  o.add_options()("checkpoint", "checkpoint written by train --save", cxxopts::value<std::string>())
      ("data", "a file to score (its lines, or its text in windows of the context); default: the validation split",
       cxxopts::value<std::string>())
      ("metrics-out", "JSON Lines: {\"event\": \"eval\", \"loss\", \"perplexity\", \"bpb\", \"tokens\", \"bytes\"}",
       cxxopts::value<std::string>())
      ("threads", "threads (0: OpenMP's default)", cxxopts::value<std::string>()->default_value("0"))
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
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
  data::TextCorpus corpus;
  std::string what;
  if (r.count("data")) {
    const std::string path = r["data"].as<std::string>();
    std::string text;
    try {
      text = data::read_text_file(path);
    } catch (const std::runtime_error& e) {  // "<path>: <why>"
      throw UsageError(fmt::format("--data {}", e.what()));
    }
    try {
      corpus = data::make_text_corpus(text, {.format = m.config.format, .context = m.context, .val_fraction = 0,
                                             .seed = 0}, m.tokenizer);
    } catch (const std::invalid_argument& e) {  // invalid UTF-8, a character not in the vocabulary, too short
      throw UsageError(fmt::format("--data {}: {}", path, e.what()));
    } catch (const std::runtime_error& e) {  // a stored BPE's split pattern gave up on the text
      throw UsageError(fmt::format("--data {} through the checkpoint's tokenizer: {}", path, e.what()));
    }
    what = path;
  } else {
    corpus = read_corpus(m.config, m.context, m.tokenizer);
    what = "the validation split of " + m.config.data;
  }
  const SplitLoss l = split_loss(*m.model, corpus, /*validation=*/true);
  fmt::print("checkpoint {} (step {}): loss {:.4f} nats/token, perplexity {}, {:.4f} bits/byte, over {} tokens ({} "
             "bytes) of {}\n", r["checkpoint"].as<std::string>(), m.steps_done, l.loss, ppl(l.loss), l.bits_per_byte(),
             l.tokens, l.bytes, what);
  if (metrics)
    metrics->write(fmt::format("{{\"event\": \"eval\", \"loss\": {}, \"perplexity\": {}, \"bpb\": {}, \"tokens\": {}, "
                               "\"bytes\": {}}}\n", l.loss, std::exp(l.loss), l.bits_per_byte(), l.tokens, l.bytes));
  return 0;
}

// ------------------------------------------------------------------------------------------- attention
// Every layer's and head's map (gpt::attention_over's) as an SVG panel, and the last layer's mean over its heads.
struct AttentionMaps {
  std::vector<train::AttentionPanel> panels;
  std::vector<std::vector<double>> mean_last;  // [T][T]
  std::size_t layers = 0;
};

AttentionMaps panels_of(const std::vector<Tensor>& maps, std::size_t T) {  // maps: per layer [nh, T, T]
  AttentionMaps out;
  out.mean_last.assign(T, std::vector<double>(T, 0.0));
  out.layers = maps.size();
  for (std::size_t layer = 0; layer < maps.size(); ++layer) {
    const Tensor& w = maps[layer];
    const std::int64_t H = w.shape()[0];
    for (std::int64_t h = 0; h < H; ++h) {
      train::AttentionPanel p{fmt::format("layer {} head {}", layer, h), {}};
      for (std::size_t i = 0; i < T; ++i) {
        p.weights.emplace_back();
        for (std::size_t j = 0; j < T; ++j) {
          const double v = w.at({h, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)});
          p.weights.back().push_back(v);
          if (layer + 1 == maps.size()) out.mean_last[i][j] += v / static_cast<double>(H);
        }
      }
      out.panels.push_back(std::move(p));
    }
  }
  return out;
}

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
  std::vector<std::string> labels;
  for (const std::int64_t id : ids) labels.push_back(data::token_label(m.tokenizer, id));
  const AttentionMaps maps = panels_of(attention_over(*m.model, ids), ids.size());
  fmt::print("last layer's attention (mean over heads): rows = the position reading, columns = what it reads\n");
  std::cout << train::terminal_heatmap(maps.mean_last, labels, labels,
                                       !r.count("no-color") && train::ProgressBar::is_terminal(stdout));
  if (svg.empty()) return 0;
  write_file_atomically(svg, train::attention_maps_svg(maps.panels, labels, labels,
                                                       "cppgrad-gpt: causal attention of " + prompt));
  fmt::print("wrote {} attention maps ({} layers x {} heads) to {}\n", maps.panels.size(), maps.layers,
             maps.panels.size() / std::max<std::size_t>(1, maps.layers), svg);
  return 0;
}

const char* kUsage =
    "usage: cppgrad-gpt <command> [flags]   (cppgrad-gpt <command> --help for its flags)\n"
    "       cppgrad-gpt --version\n\n"
    "  train      train a GPT on characters or BPE tokens (default: the characters of Debian's word list\n"
    "             /usr/share/dict/american-english, d_model 64, 4 layers, 4 heads, batch 32, AdamW 5e-4, 2000 steps)\n"
    "  sample     invent text with a trained model (--temperature, --top-k, --top-p, --explain)\n"
    "  eval       loss, perplexity and bits per byte on the validation split or a file\n"
    "  attention  every layer's and head's causal attention map over a prompt (terminal; --svg FILE also)\n"
    "  tokenize   encode a file to token ids, decode ids to bytes, train a BPE (gpt2 or bpe:FILE tokenizers)\n"
    "  import     a GPT-2 model.safetensors (Hugging Face's layout) to a checkpoint: sample, eval, train --init\n"
    "  export     a checkpoint's model as Hugging Face's GPT-2 model.safetensors (--config-json: config.json too)\n";

// Each command's remedy when memory runs out, in its own flags.
const std::map<std::string, std::string> kOutOfMemoryHints = {
    {"train", "smaller --d-model, --layers, --batch-size or --context need less"},
    {"sample", "the model is too large for this machine; fewer --num samples or --max-new-tokens need less"},
    {"eval", "the model or --data is too large for this machine; a smaller --data file needs less"},
    {"attention", "the model is too large for this machine; a shorter --prompt needs less"},
    {"tokenize", "a smaller --data file needs less: split it and run once per part"},
    {"import", "the model is too large for this machine; a smaller GPT-2 (--preset gpt2) needs less"},
    {"export", "the model is too large for this machine to write"}};

}  // namespace

int main(int argc, char** argv) {
  return train::run_program("cppgrad-gpt", argc, argv, kUsage,
                          {{"train", cmd_train}, {"sample", cmd_sample}, {"eval", cmd_eval}, {"attention", cmd_attention},
                           {"tokenize", cmd_tokenize}, {"import", cmd_import}, {"export", cmd_export}},
                          kOutOfMemoryHints);
}
