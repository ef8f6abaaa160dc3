#include "models/gpt/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <variant>

#include "core/allocator_release.h"
#include "core/autograd.h"
#include "core/thread_pool.h"
#include "data/bigram.h"
#include "data/corpus_rows.h"
#include "data/utf8.h"
#include "models/gpt/checkpoint.h"
#include "optim/adam.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/diverged.h"
#include "train/gpt_step.h"
#include "train/step_loop.h"
#include "train/stop.h"

namespace cppgrad::gpt {

// AdamW as makemore and the PyTorch words anchor (gpt/words_pytorch.py) run it: betas 0.9 / --beta2 (0.99 by
// default), decay on every parameter unless --weight-decay-on matrices (nanoGPT's two groups).
std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& c, nn::NamedTensors params) {
  return std::make_unique<optim::Adam>(std::move(params),
                                       optim::AdamOptions{.lr = c.lr, .beta1 = 0.9, .beta2 = c.beta2, .eps = 1e-8,
                                                          .weight_decay = c.weight_decay,
                                                          .decoupled_weight_decay = true,
                                                          .decay_on = c.weight_decay_on});
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

data::TextCorpusConfig corpus_config(const TrainConfig& config, std::int64_t context) {
  return {.format = config.format, .context = context, .val_fraction = 0.1, .seed = config.seed};
}

// The data's bytes; a refusal ("<path>: <why>") names where the path came from: "--data words.txt: no such file".
std::string read_data(const TrainConfig& config, const std::string& source) {
  try {
    return data::read_text_file(config.data);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(source + " " + e.what());
  }
}

// A BPE's split pattern is whatever its .model file says, so its matcher may refuse the text (data/text_split.h: a
// pattern over its step budget): the refusal names the data and where the tokenizer came from.
data::TextCorpus bpe_corpus(const TrainConfig& config, std::int64_t context, const data::Tokenizer& bpe,
                            const std::string& tokenizer_source, const std::string& source) {
  const std::string text = read_data(config, source);
  try {
    return data::make_text_corpus(text, corpus_config(config, context), bpe);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("{} {} through {}: {}", source, config.data, tokenizer_source, e.what()));
  } catch (const std::invalid_argument& e) {  // too few tokens for the context
    throw std::invalid_argument(fmt::format("{} {}: {}", source, config.data, e.what()));
  }
}

}  // namespace

data::TextCorpus read_corpus(const TrainConfig& config, std::int64_t context, const std::string& source) {
  if (config.tokenizer.kind == data::TokenizerName::Kind::chars) {
    const std::string text = read_data(config, source);
    try {
      return data::make_text_corpus(text, corpus_config(config, context));
    } catch (const std::invalid_argument& e) {  // invalid UTF-8, too few lines, a line or a split that does not fit
      throw std::invalid_argument(fmt::format("{} {}: {}", source, config.data, e.what()));
    }
  }
  return bpe_corpus(config, context, data::Tokenizer(data::load_bpe(config.tokenizer)),
                    "--tokenizer " + config.tokenizer.text(), source);
}

data::TextCorpus read_corpus(const TrainConfig& config, std::int64_t context, const data::Tokenizer& model_tokenizer,
                             const std::string& source) {
  if (model_tokenizer.bpe()) return bpe_corpus(config, context, model_tokenizer, "the checkpoint's tokenizer", source);
  data::TextCorpus corpus = read_corpus(config, context, source);
  if (!(corpus.tokenizer == model_tokenizer))
    throw std::runtime_error(source + " " + config.data +
                             " gives another vocabulary than the checkpoint's (has it changed?)");
  return corpus;
}

// ------------------------------------------------------------------------------------------- the loss of a split
std::vector<std::int64_t> token_byte_lengths(const data::Tokenizer& tokenizer) {
  std::vector<std::int64_t> bytes;
  bytes.reserve(static_cast<std::size_t>(tokenizer.size()));
  for (std::int64_t id = 0; id < tokenizer.size(); ++id) {
    try {
      const std::string token = tokenizer.token_bytes(id);
      bytes.push_back(token.empty() ? 1 : std::ssize(token));
    } catch (const std::invalid_argument&) {
      bytes.push_back(0);
    }
  }
  return bytes;
}

namespace {

// The bytes the counted targets of a batch stand for (-1, a position nothing is predicted at, counts none).
std::int64_t target_bytes(const Tensor& targets, const std::vector<std::int64_t>& bytes_of) {
  std::int64_t total = 0;
  for (const std::int64_t id : targets.to_vector<std::int64_t>())
    if (id >= 0) total += bytes_of.at(static_cast<std::size_t>(id));
  return total;
}

// The loss over one split of either shape: its evaluation rows in order (every line; the windows 0, T, 2T, ...), in
// chunks of eval_chunk_rows.
template <typename Splits>
SplitLoss loss_over(const nn::GPT& model, const Splits& s, std::int64_t T, data::Split split,
                    const std::vector<std::int64_t>& bytes_of, const EvalProgress& on_chunk, std::int64_t max_rows) {
  const std::vector<std::int64_t> rows = data::eval_rows(s, split, T);
  const std::int64_t all = std::ssize(rows), n = max_rows > 0 ? std::min(all, max_rows) : all;
  const std::int64_t rows_per_chunk = eval_chunk_rows(T, model.config().vocab_size);
  const std::int64_t chunks = (n + rows_per_chunk - 1) / rows_per_chunk;
  SplitLoss out;
  double sum = 0;  // nats, summed chunk by chunk in order
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::vector<std::int64_t> chunk(rows.begin() + c * rows_per_chunk,
                                          rows.begin() + std::min(n, (c + 1) * rows_per_chunk));
    const data::TokenBatch b = data::batch(s, split, chunk, T);
    if (b.tokens == 0) continue;
    const nn::GPTOutput o = model.forward(b.idx, b.targets);  // loss: mean over the chunk's counted targets
    sum += o.loss.item() * static_cast<double>(b.tokens);
    out.tokens += b.tokens;
    out.bytes += target_bytes(b.targets, bytes_of);
    if (on_chunk) on_chunk(c + 1, chunks, sum / static_cast<double>(out.tokens));
  }
  out.loss = out.tokens > 0 ? sum / static_cast<double>(out.tokens) : 0.0;
  return out;
}

}  // namespace

std::int64_t eval_chunk_rows(std::int64_t context, std::int64_t vocab) {
  return std::max<std::int64_t>(1, std::min(16384 / context, (std::int64_t{1} << 24) / (context * vocab)));
}

double SplitLoss::bits_per_nat() const {
  return bytes > 0 ? static_cast<double>(tokens) / (static_cast<double>(bytes) * std::log(2.0)) : 0.0;
}

SplitLoss split_loss(const nn::GPT& model, const data::TextCorpus& corpus, bool validation,
                     const EvalProgress& on_chunk, std::int64_t max_rows) {
  NoGradGuard no_grad;
  const data::Split split = validation ? data::Split::validation : data::Split::train;
  const std::vector<std::int64_t> bytes_of = token_byte_lengths(corpus.tokenizer);
  return std::visit(
      [&](const auto& s) { return loss_over(model, s, corpus.context, split, bytes_of, on_chunk, max_rows); },
      corpus.splits);
}

std::int64_t eval_row_bound(std::int64_t eval_tokens, std::int64_t parameters, std::int64_t context) {
  const std::int64_t tokens = eval_tokens > 0 ? eval_tokens : kEvalMultiplyAdds / std::max<std::int64_t>(1, parameters);
  return std::max<std::int64_t>(1, (tokens + context - 1) / context);
}

// ------------------------------------------------------------------------------------------- the trainer
Trainer::Trainer(const TrainConfig& config, train::ProcessLink* processes, const data::Tokenizer* bpe,
                 const std::string& data_source)
    : config_(config.with_shards()), processes_(processes), batch_gen_(config.seed + 2) {
  config_.validate();
  corpus_ = bpe && bpe->bpe() ? read_corpus(config_, config_.corpus_context(), *bpe, data_source)
                              : read_corpus(config_, config_.corpus_context(), data_source);
  config_.check_sizes(corpus_.tokenizer.size(), corpus_.context);
  bigram_val_loss_ = data::bigram_val_loss(corpus_);

  Generator init(config_.seed);
  const nn::GPTConfig mc = config_.model_config(corpus_.tokenizer.size(), corpus_.context);
  const int threads = config_.threads > 0 ? static_cast<int>(config_.threads) : max_parallel_workers();
  // The first model made is the run's (its initial values from `init`); a replica's own values are dropped.
  parallel_ = std::make_unique<train::DataParallel<nn::GPT>>(
      train::DataParallelOptions{.threads = threads, .shards = static_cast<int>(config_.shards), .processes = processes},
      [&] { return make_gpt(mc, config_, init); });
  if (processes_) {  // one run: the same configuration and data everywhere, rank 0's weights
    TrainConfig shared = config_;
    shared.threads = 0;  // each process may use its own cores
    train::check_processes_agree(*processes_, "configuration", shared.to_json() + mc.to_json());
    const std::string sizes = std::visit([](const auto& s) {
      return fmt::format("{} + {} {}", data::split_size(s, data::Split::train), data::split_size(s, data::Split::validation),
                         data::split_unit(s));
    }, corpus_.splits);
    const std::string vocab =
        corpus_.tokenizer.chars() ? corpus_.tokenizer.chars()->vocab_json() : corpus_.tokenizer.describe();
    train::check_processes_agree(*processes_, "data (vocabulary and split sizes)", vocab + sizes);
    processes_->broadcast(model().parameters());
  }
  optimizer_ = make_optimizer(config_, model().named_trainable_parameters());  // a LoRA run's: its adapters
  schedule_ = {.kind = config_.schedule,
               .base_lr = config_.lr,
               .warmup_steps = config_.warmup_steps,
               .total_steps = config_.steps,
               .min_lr = config_.min_lr};
}

data::TokenBatch Trainer::batch(const std::vector<std::int64_t>& rows) const {
  return std::visit([&](const auto& s) { return data::batch(s, data::Split::train, rows, corpus_.context); },
                    corpus_.splits);
}

// What a batch draws its rows from: the training lines, or the starts of the windows of the training stream.
std::int64_t Trainer::random_row_count() const {
  return std::visit([&](const auto& s) { return data::random_row_count(s, corpus_.context); }, corpus_.splits);
}

std::int64_t Trainer::validation_rows() const {
  return std::visit([&](const auto& s) { return std::ssize(data::eval_rows(s, data::Split::validation, corpus_.context)); },
                    corpus_.splits);
}

std::int64_t Trainer::eval_rows() const {
  return std::min(validation_rows(),
                  eval_row_bound(config_.eval_tokens, parallel_->model().num_parameters(), corpus_.context));
}

// The training step: a random batch, then forward, loss, backward on its shards, their sum, clipping and AdamW
// (train/gpt_step.h: sharded_step, beside the plain_step it equals at one shard).
double Trainer::train_step() {
  const std::vector<std::int64_t> rows = data::random_rows(random_row_count(), config_.batch_size, batch_gen_);
  optimizer_->set_lr(schedule_.lr_at(step_));
  const LinearPrecisionGuard precision(config_.dtype);  // the shards' threads take it along (core/precision.h)
  const double loss = train::sharded_step(*parallel_, batch(rows), *optimizer_, config_.clip_grad);
  ++step_;
  return loss;
}

Evaluation Trainer::evaluate(const EvalProgress& on_chunk) {
  // The last step's blocks, cached for the next step, are not the sizes an evaluation asks for: give them back first,
  // or the evaluation's logits come on top of them (GPT-2 124M's peak, docs/performance.md). The next step takes
  // fresh blocks once; the numbers are the same.
  release_cached_storage();
  nn::EvalModeGuard eval(model());  // no dropout while measuring; the run's mode is back after
  const LinearPrecisionGuard precision(config_.dtype);  // the model is measured as it trains
  Evaluation e;
  e.step = step_;
  e.train_loss = steps_since_eval_ > 0 ? loss_sum_ / static_cast<double>(steps_since_eval_) : std::nan("");
  const SplitLoss val = split_loss(model(), corpus_, /*validation=*/true, on_chunk, eval_rows());
  e.val_loss = val.loss, e.val_bpb = val.bits_per_byte();
  // A resumed run's earlier evaluations came from the checkpoint without val_bpb: the same split gives their factor.
  for (Evaluation& earlier : history_) earlier.val_bpb = earlier.val_loss * val.bits_per_nat();
  // Weights that are finite can still overflow the logits: such a model is as diverged as one whose training loss
  // is NaN, and its checkpoint must not replace the last good one.
  train::check_loss_finite(e.val_loss, /*epoch=*/0, step_, config_.steps);
  e.lr = optimizer_->lr();
  e.tokens_per_s = interval_s_ > 0 ? static_cast<double>(steps_since_eval_ * tokens_per_step()) / interval_s_ : 0.0;
  train_s_ += interval_s_;
  e.elapsed_s = train_s_;
  history_.push_back(e);
  loss_sum_ = 0, steps_since_eval_ = 0, interval_s_ = 0;
  return e;
}

void Trainer::run(const StepCallback& on_step, const EvalCallback& on_eval, const StopCheck& stop,
                  const EvalProgress& on_eval_chunk) {
  run_until(config_.steps, on_step, on_eval, stop, on_eval_chunk);
}

// The loop: train::StepLoop says when (the last step, a chunk's end, a stop asked for, an evaluation due) and guards
// against a diverged loss; the step, its timing and the evaluation are the trainer's, what is shown the caller's.
void Trainer::run_until(std::int64_t last, const StepCallback& on_step, const EvalCallback& on_eval,
                        const StopCheck& stop, const EvalProgress& on_eval_chunk) {
  const std::int64_t first = step_;
  double session_s = 0;
  train::StepLoop loop({.steps = config_.steps, .eval_every = config_.eval_every, .until = last, .stop = stop});
  while (loop.next(step_)) {
    const auto t0 = std::chrono::steady_clock::now();
    const double loss = train_step();
    const double dt = seconds_since(t0);
    interval_s_ += dt, session_s += dt;
    loss_sum_ += loss, ++steps_since_eval_;
    const bool evaluation_due = loop.stepped(step_, loss);
    if (on_step) on_step(step_, loss, static_cast<double>((step_ - first) * tokens_per_step()) / std::max(session_s, 1e-9));
    if (evaluation_due) {
      const Evaluation e = evaluate(on_eval_chunk);
      if (on_eval) on_eval(e);
    }
  }
  if (loop.stopped()) throw train::TrainingStopped(/*epoch=*/0, step_, config_.steps);
}

void Trainer::grow_steps(std::int64_t steps) {
  TrainConfig grown = config_;
  grown.steps = steps;
  grown.validate();  // --steps' bound
  if (steps <= step_)
    throw std::invalid_argument(fmt::format("--steps {}: the run has done {} steps; give more to train on", steps, step_));
  if (!grown.mismatched_for_resume(config_).empty())
    throw std::invalid_argument("--steps cannot grow under --schedule cosine (its rate at every step depends on "
                                "--steps): start a new run with the steps you want");
  config_ = grown;
  schedule_.total_steps = steps;
}

// ------------------------------------------------------------------------------------------- checkpoints
void Trainer::save(const std::string& path) const {
  save_gpt_checkpoint(path, parallel_->model(), *optimizer_, config_, corpus_.tokenizer, step_, history_,
                      {.batch_rng = batch_gen_.state(), .loss_sum = loss_sum_, .steps_since_eval = steps_since_eval_,
                       .train_s = train_s_, .interval_s = interval_s_},
                      lora_base_);
}

// A resumed run reads its text through the checkpoint's tokenizer: another is refused naming both (the --tokenizer
// row may change in the config table, because a .model file may move: the tokens are what must agree).
void Trainer::check_same_tokenizer(const std::string& path, const GptCheckpoint& c) const {
  if (c.tokenizer == corpus_.tokenizer) return;
  if (c.tokenizer.chars() && corpus_.tokenizer.chars())
    throw std::runtime_error("checkpoint " + path + ": its vocabulary differs from the one " + config_.data +
                             " gives now (has the file changed?)");
  throw std::runtime_error(fmt::format("checkpoint {} was trained with --tokenizer {} ({}), and this run's --tokenizer {} "
                                       "gives another ({}): resume with the checkpoint's tokenizer, or start a new run",
                                       path, c.config.tokenizer.text(), c.tokenizer.describe(), config_.tokenizer.text(),
                                       corpus_.tokenizer.describe()));
}

void Trainer::load(const std::string& path) {
  resume(path, read_gpt_checkpoint(path));  // checked whole: format, config, vocab, counts, history
}

void Trainer::load_with_this_data(const std::string& path) {
  GptCheckpoint c = read_gpt_checkpoint(path);
  c.config.data = config_.data;
  resume(path, std::move(c));
}

void Trainer::resume(const std::string& path, GptCheckpoint c) {
  const auto differ = config_.mismatched_for_resume(c.config);
  if (!differ.empty()) {
    std::string keys;
    for (const auto& k : differ) keys += (keys.empty() ? "" : ", ") + k;
    throw std::runtime_error("checkpoint " + path + " was trained with another configuration (" + keys +
                             " differ); resume with the same flags or start a new run");
  }
  check_same_tokenizer(path, c);
  // The weights and moments as read, no copies: the replicas share the weights again.
  train::restore_checkpoint_assigning(c.state, path, model(), *optimizer_,
                                      [&](const nn::StateDict& weights) { parallel_->assign_state_dict(weights); });
  model().dropout_generator().set_state(c.state.meta.generators.at("dropout_rng"));
  batch_gen_.set_state(c.progress.batch_rng);
  step_ = c.step;
  lora_base_ = c.lora_base;
  history_ = std::move(c.history);
  loss_sum_ = c.progress.loss_sum, steps_since_eval_ = c.progress.steps_since_eval;
  train_s_ = c.progress.train_s, interval_s_ = c.progress.interval_s;
  if (processes_) {  // every process resumed the same checkpoint: the same step, and rank 0's weights
    train::check_processes_agree(*processes_, "resumed checkpoint (its step)", std::to_string(step_));
    processes_->broadcast(model().parameters());
  }
}

void Trainer::init_from(const GptCheckpoint& c, const std::string& path) {
  if (c.lora_base)
    throw lora_checkpoint_as_init(path, *c.lora_base);
  check_finetune_of(c.model, model().config(), "--init " + path);
  check_same_tokenizer(path, c);
  nn::StateDict state = finetune_weights(c.state.model, model().config().block_size);
  if (config_.lora.rank > 0) {  // the base under this run's adapters (its trainable parameters), which keep their values
    for (const auto& [name, adapter] : model().named_trainable_parameters()) state.emplace(name, adapter.detach());
    lora_base_ = LoRABase{.path = absolute_path(path), .weights = weights_hash(c.state.model)};
  }
  try {
    parallel_->assign_state_dict(state);  // names and shapes checked (a transposed weight is refused); no copy
  } catch (const std::exception& e) {
    throw std::runtime_error("--init " + path + ": " + e.what());
  }
  if (processes_) processes_->broadcast(model().parameters());
}

TrainConfig read_checkpoint_config(const std::string& path) {
  return read_gpt_checkpoint(path, train::CheckpointTensors::none).config;
}

}  // namespace cppgrad::gpt
