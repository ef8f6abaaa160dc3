// cppgrad-gpt: trains a decoder-only character model (GPT-2's architecture, nanoGPT's names) on text and samples
// from it.
//
//   cppgrad-gpt train     [flags]                          train on a word list (default) or any text
//   cppgrad-gpt sample    --checkpoint PATH [flags]        invent text, with a KV cache; --explain shows the choices
//   cppgrad-gpt eval      --checkpoint PATH [--data FILE]  loss and perplexity of a split or of a file, and
//   cppgrad-gpt attention --checkpoint PATH --prompt TEXT  every layer's and head's causal attention map
//                                                          (gpt/inspect_commands.h)
//   cppgrad-gpt tokenize  encode|decode|train [flags]      text to token ids and back; train a BPE (gpt/tokenize.h)
//   cppgrad-gpt import    --hf FILE --out CKPT [flags]     GPT-2 in Hugging Face's layout to a checkpoint, and
//   cppgrad-gpt export    --checkpoint CKPT --out FILE     back (gpt/hf_commands.h)
//   cppgrad-gpt merge     --checkpoint LORA --out CKPT     a LoRA checkpoint's adapters folded into its weights
//                                                          (gpt/merge_command.h)
//
// Exit status: 0 on success, 2 on bad input (flags, values, files), 3 when training diverged (the loss became NaN or
// Inf; the last checkpoint stays), 130 / 143 when Ctrl-C / SIGTERM stopped training (saved with --save), 1 otherwise.
#include <fmt/format.h>

#include <cstdio>
#include <cxxopts.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/cli/processes.h"
#include "apps/gpt/hf_commands.h"
#include "apps/gpt/inspect_commands.h"
#include "apps/gpt/merge_command.h"
#include "apps/gpt/tokenize.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/preset.h"
#include "models/gpt/report.h"
#include "models/gpt/run_config.h"
#include "models/gpt/run_start.h"
#include "models/gpt/sample_origins.h"
#include "models/gpt/sample_session.h"
#include "models/gpt/train_checks.h"
#include "models/gpt/trainer.h"
#include "train/cli.h"
#include "train/cli_flags.h"
#include "train/cli_outputs.h"
#include "train/plot/progress_bar.h"
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

// The run's configuration: the defaults or the resumed checkpoint's, with the flags given, then the shape of
// --preset or of the --init checkpoint (gpt/run_config.h); validated.
TrainConfig train_config(const cxxopts::ParseResult& r, const GptCheckpoint* init) {
  const bool resume = r.count("resume") > 0;
  check_resume_or_init(resume, init != nullptr);
  TrainConfig c;
  if (resume) c = read_checkpoint_config(r["resume"].as<std::string>());
  train::apply_config_flags(r, config_table(), c);
  std::optional<std::string> preset;
  if (r.count("preset")) preset = r["preset"].as<std::string>();
  return run_config(c, {.given = train::typed_config_flags(r, config_table()), .preset = preset, .init = init,
                        .init_path = flag_path(r, "init"), .resumed = resume, .data_given = r.count("data") > 0});
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
  train::ProgressBar bar(stdout, "step", t.config().steps, "tokens/s");  // cleared when it goes
  const auto on_step = [&](std::int64_t step, double loss, double tokens_per_s) {
    if (!out.quiet) bar.update(step, loss, tokens_per_s);
  };
  train::ProgressBarFromFirstReport eval_bar(stdout, "eval", "chunks/s");  // an evaluation's, in the step bar's place
  const auto on_eval_chunk = [&](std::int64_t done, std::int64_t total, double loss) {
    if (!out.quiet) eval_bar.report(done, total, loss);
  };
  const auto on_eval = [&](const Evaluation& e) {
    eval_bar.finish();
    bar.finish();
    if (!out.quiet) fmt::print("{}", evaluation_line(e, t.config().steps));
    std::fflush(stdout);
    train::write_outputs(out, metrics_jsonl(t.history(), nullptr),
                         [&] { return loss_chart(t.history(), t.bigram_val_loss(), "cppgrad-gpt"); },
                         [&](const std::string& path) { t.save(path); });
  };
  train::catch_stop_signals();  // from here Ctrl-C and SIGTERM stop at the next step boundary (train/stop.h)
  try {
    t.run(on_step, on_eval, [&] { return cli::stop_requested(processes); }, on_eval_chunk);
  } catch (const train::TrainingStopped&) {
    return false;
  }
  return true;
}

// The run's last line and its samples; the final metrics object.
void print_final(Trainer& t, train::TrainOutputs& out, std::int64_t samples) {
  const FinalSummary final = final_summary(t);
  if (out.metrics) out.metrics->write(metrics_jsonl(t.history(), &final));
  fmt::print("{}", done_line(final));
  if (samples > 0) fmt::print("{}", samples_line(t.corpus(), run_samples(t, samples)));
}

int cmd_train(int argc, char** argv) {
  cxxopts::Options o = train_flags();
  const auto r = train::parse_flags(o, argc, argv);
  // --init's checkpoint: its shape for the config now, its weights once the model is built (start_run).
  std::optional<GptCheckpoint> init;
  if (r.count("init")) init = read_init_checkpoint(flag_path(r, "init"), train::CheckpointTensors::none);
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
  if (r.count("resume"))  // a LoRA run's base, which its checkpoint names
    if (const auto base = lora_base_path(flag_path(r, "resume"))) inputs.push_back({"the base of --resume", *base});
  train::open_train_outputs(r, rank0, out, {}, inputs);
  train::set_threads(config.threads);
  // Reads the data (an unreadable or invalid file is a usage error naming where its path came from), then the
  // resumed checkpoint's state or --init's weights.
  const std::unique_ptr<Trainer> trainer = start_run(config, processes.get(), {
      .resume = out.resume, .tokenizer_given = r.count("tokenizer") > 0, .data_given = r.count("data") > 0,
      .init = std::move(init), .init_path = flag_path(r, "init")});
  Trainer& t = *trainer;
  if (!out.quiet) fmt::print("{}", run_header(t));
  std::fflush(stdout);
  if (!run_training(t, out, processes.get()))
    return rank0 ? stop_training(t, out) : train::stop_status();  // rank 0 saves and says how to resume
  if (rank0) print_final(t, out, samples);
  return 0;
}

// ------------------------------------------------------------------------------------------- sample
// --explain's lines as each token is chosen; then each sample as it is, and a newline (a line) or a blank line (a
// running text); then, for a model of lines, how many samples are lines of its data (gpt/sample_origins.h).
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
      ("dtype", "float32 | bfloat16: the linear layers' products (default: the checkpoint's)", cxxopts::value<std::string>())
      ("explain", "for every token: the five likeliest next tokens before and after temperature and the filters")
      ("h,help", "this help");
  const auto r = train::parse_flags(o, argc, argv);
  const std::string checkpoint = flag_path(r, "checkpoint");
  const std::int64_t num = flag_value<std::int64_t>(r, "num"), max_new = flag_value<std::int64_t>(r, "max-new-tokens");
  const SampleSettings settings{.prompt = r["prompt"].as<std::string>(),
                                .max_new_tokens = max_new > 0 ? std::optional(max_new) : std::nullopt,  // 0: default
                                .sampling = {.temperature = flag_value<double>(r, "temperature"),
                                             .top_k = flag_value<std::int64_t>(r, "top-k"),
                                             .top_p = flag_value<double>(r, "top-p")},
                                .seed = flag_value<std::uint64_t>(r, "seed")};
  if (num < 1 || num > 100000) throw UsageError("--num must be in 1..100000");
  if (max_new < 0 || max_new > 1'000'000) throw UsageError("--max-new-tokens must be in 0..1000000");
  nn::check_sampling(settings.sampling);  // std::invalid_argument: a usage error too
  if (checkpoint.empty()) throw UsageError("sample needs --checkpoint PATH (written by train --save)");
  const std::string dtype = r.count("dtype") ? r["dtype"].as<std::string>() : "";
  dtype_or(dtype, LinearPrecision::Float32);  // a bad name is refused before the checkpoint is read
  const LoadedModel m = load_model(checkpoint);
  const LinearPrecisionGuard precision(dtype_or(dtype, m.config.dtype));
  SampleSession session(*m.model, m.tokenizer, m.context, settings, "--prompt");
  const auto explain = [&](const nn::GenerateStep& s) { fmt::print("{}", explain_lines(m.tokenizer, s)); };
  std::vector<std::string> samples;  // every sample drawn (--explain's lines as it goes), then printed
  for (std::int64_t i = 0; i < num; ++i)
    samples.push_back(session.next(r.count("explain") ? nn::StepCallback(explain) : nullptr));
  for (const std::string& s : samples) fmt::print("{}{}", s, session.after_sample());
  fmt::print("{}", origins_report(m, samples));
  return 0;
}

// A function, not a global: its default run is read from TrainConfig when main runs.
std::string usage() {
  return
    "usage: cppgrad-gpt <command> [flags]   (cppgrad-gpt <command> --help for its flags)\n"
    "       cppgrad-gpt --version\n\n"
    "  train      train a GPT on characters or BPE tokens; with no flags, on Debian's word list:\n"
    "             " + default_run_text() + "\n"
    "  sample     invent text with a trained model (--temperature, --top-k, --top-p, --explain)\n"
    "  eval       loss, perplexity and bits per byte on the validation split or a file\n"
    "  attention  every layer's and head's causal attention map over a prompt (terminal; --svg FILE also)\n"
    "  tokenize   encode a file to token ids, decode ids to bytes, train a BPE (gpt2 or bpe:FILE tokenizers)\n"
    "  import     a GPT-2 model.safetensors (Hugging Face's layout) to a checkpoint: sample, eval, train --init\n"
    "  export     a checkpoint's model as Hugging Face's GPT-2 model.safetensors (--config-json: config.json too)\n"
    "  merge      a LoRA checkpoint (train --init CKPT --lora-rank R) as a plain one: adapters folded into weights\n";
}

// Each command's remedy when memory runs out, in its own flags.
const std::map<std::string, std::string> kOutOfMemoryHints = {
    {"train", "smaller --d-model, --layers, --batch-size or --context need less"},
    {"sample", "the model is too large for this machine; fewer --num samples or --max-new-tokens need less"},
    {"eval", "the model or --data is too large for this machine; a smaller --data file needs less"},
    {"attention", "the model is too large for this machine; a shorter --prompt needs less"},
    {"tokenize", "a smaller --data file needs less: split it and run once per part"},
    {"import", "the model is too large for this machine; a smaller GPT-2 (--preset gpt2) needs less"},
    {"export", "the model is too large for this machine to write"},
    {"merge", "the model is too large for this machine to merge"}};

}  // namespace

int main(int argc, char** argv) {
  return train::run_program("cppgrad-gpt", argc, argv, usage(),
                          {{"train", cmd_train}, {"sample", cmd_sample}, {"eval", cmd_eval}, {"attention", cmd_attention},
                           {"tokenize", cmd_tokenize}, {"import", cmd_import}, {"export", cmd_export},
                           {"merge", cmd_merge}},
                          kOutOfMemoryHints);
}
