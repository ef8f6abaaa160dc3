#include "models/reverse/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/autograd.h"
#include "core/json_bounded.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/views.h"
#include "core/thread_pool.h"  // max_parallel_workers
#include "nn/seq2seq.h"
#include "train/run_config.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/diverged.h"
#include "train/history.h"
#include "train/reversal_step.h"
#include "train/step_loop.h"
#include "train/stop.h"

namespace cppgrad::reverse {

namespace {

const char* const kFormatV1 = "cppgrad-reverse-checkpoint-v1";
const train::CheckpointFormat kFormat{.program = "cppgrad-reverse", .format = "cppgrad-reverse-checkpoint-v2",
                                      .upgrades_from = {kFormatV1}};

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& c, nn::NamedTensors params) {
  if (c.optimizer == OptimizerKind::sgd)
    return std::make_unique<optim::SGD>(std::move(params), optim::SGDOptions{.lr = c.lr, .momentum = c.momentum,
                                                                             .weight_decay = c.weight_decay});
  return std::make_unique<optim::Adam>(std::move(params),
                                       optim::AdamOptions{.lr = c.lr, .weight_decay = c.weight_decay,
                                                          .decoupled_weight_decay = c.optimizer == OptimizerKind::adamw});
}

nlohmann::json history_json(const std::vector<EpochMetrics>& history) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& m : history)
    arr.push_back({{"epoch", m.epoch}, {"loss", m.loss}, {"train_token_acc", m.train_token_acc},
                   {"test_seq_acc", m.test_seq_acc}, {"test_token_acc", m.test_token_acc}, {"lr", m.lr},
                   {"epoch_s", m.epoch_s}});
  return arr;
}

nlohmann::json progress_json(const Trainer::EpochProgress& p) {
  const AccuracyCounts& c = p.teacher_forced;
  return {{"steps", p.steps}, {"loss_sum", p.loss_sum}, {"right_rows", c.right_rows}, {"rows", c.rows},
          {"right_tokens", c.right_tokens}, {"tokens", c.tokens}, {"elapsed_s", p.elapsed_s}};
}

// The config with its shards chosen (the checkpoint stores them), checked before anything is built from it.
TrainConfig checked(const TrainConfig& config) {
  TrainConfig c = config.with_shards();
  c.validate();
  if (c.arch != Arch::transformer)
    throw std::invalid_argument("--arch " + choice_name(kArchs, c.arch) + " is handled by the tutorial trainer, "
                                "not this one");
  return c;
}

}  // namespace

Trainer::Trainer(const TrainConfig& config, train::ProcessLink* processes)
    : config_(checked(config)),
      data_(data::make_reversal_data(config_.data_config())),
      // The model draws its initial values from the seed; the replicas draw on, but use the model's values.
      parallel_({.threads = config_.threads > 0 ? static_cast<int>(config_.threads) : max_parallel_workers(),
                 .shards = static_cast<int>(config_.shards),
                 .processes = processes},
                [this, init = Generator(config_.seed)]() mutable {
                  return std::make_unique<nn::Seq2SeqTransformer>(config_.model_options(), init);
                }) {
  optimizer_ = make_optimizer(config_, model().named_parameters());
  processes_ = processes;
  if (processes_) {  // one run: the same configuration everywhere (the data follows from it), rank 0's weights
    TrainConfig shared = config_;
    shared.threads = 0;  // each process may use its own cores
    train::check_processes_agree(*processes_, "configuration", shared.to_json());
    processes_->broadcast(model().parameters());
  }
  schedule_ = {.kind = config_.schedule,
               .base_lr = config_.lr,
               .step_size = steps_per_epoch() * 10,
               .gamma = 0.5,
               .warmup_steps = config_.warmup_steps,
               .total_steps = steps_per_epoch() * config_.epochs};
}

std::int64_t Trainer::steps_per_epoch() const {
  return (config_.train_size + config_.batch_size - 1) / config_.batch_size;
}

EpochMetrics Trainer::run_epoch(const StepCallback& on_step, const StopCheck& stop) {
  const auto start = std::chrono::steady_clock::now();
  // The epoch's wall time: this process's share, plus what the run a checkpoint was saved from had spent on it.
  auto seconds = [&] {
    return progress_.elapsed_s + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const std::int64_t epoch = epochs_done() + 1;
  const auto batches = data::batch_rows(data::epoch_order(data_.train.size(), config_.seed, epoch), config_.batch_size);
  const auto steps = static_cast<std::int64_t>(batches.size());
  model().train();
  if (progress_.steps == 0) grad_norms_.clear();
  // The loop every trainer runs (train/step_loop.h), over the epoch's batches: its evaluation is the epoch's, after it.
  train::StepLoop loop({.steps = steps, .eval_every = steps, .epoch = epoch, .stop = stop});
  while (loop.next(progress_.steps)) {
    const StepResult r = train_step(batches[static_cast<std::size_t>(progress_.steps)]);
    loop.stepped(progress_.steps + 1, r.loss);  // the diverged guard (the evaluation is the epoch's, after the loop)
    progress_.loss_sum += r.loss;
    progress_.teacher_forced += r.teacher_forced;
    ++progress_.steps;
    if (on_step) on_step(progress_.steps, steps, r.loss);
  }
  if (loop.stopped()) {
    progress_.elapsed_s = seconds();
    throw train::TrainingStopped(epoch, progress_.steps, steps);
  }
  EpochMetrics m;
  m.epoch = epoch;
  m.loss = progress_.loss_sum / static_cast<double>(steps);
  m.train_token_acc = accuracy(progress_.teacher_forced).token;
  m.lr = optimizer_->lr();
  const Accuracy acc = evaluate();
  m.test_seq_acc = acc.sequence;
  m.test_token_acc = acc.token;
  m.epoch_s = seconds();
  history_.push_back(m);
  progress_ = {};
  return m;
}

// ------------------------------------------------------------------------------------------- the training step
// The step itself is the training layer's (train/reversal_step.h: plain_step, and sharded_step on --shards shards of
// the batch); the trainer sets its rate and keeps what the learning tools ask for: the gradients' norms for the
// sparkline, the --grad-log line (the weights before the step against those after it), the --trace-graph file.
Trainer::StepResult Trainer::train_step(const std::vector<std::int64_t>& rows) {
  const bool variable = config_.data_config().variable_length();
  optimizer_->set_lr(schedule_.lr_at(global_step_));
  const bool log_now = grad_log_every_ > 0 && global_step_ % grad_log_every_ == 0;
  std::vector<std::pair<std::string, Tensor>> before;
  if (log_now)
    for (const auto& [name, p] : model().named_parameters()) before.emplace_back(name, p.detach().clone());
  const train::ReversalStep s =
      config_.shards == 1
          ? train::plain_step(model(), data::gather_batch(data_.train, rows, variable), *optimizer_, config_.clip_grad,
                              &trace_graph_path_)
          : train::sharded_step(parallel_, data_.train, rows, variable, *optimizer_, config_.clip_grad,
                                &trace_graph_path_);
  grad_norms_.push_back(s.grad_norm);
  if (log_now) append_grad_log(epochs_done() + 1, before);
  ++global_step_;
  return {.loss = s.loss, .teacher_forced = s.teacher_forced};
}

Accuracy Trainer::evaluate() {
  std::vector<const nn::Seq2SeqTransformer*> models;
  for (nn::Seq2SeqTransformer* m : parallel_.workers()) {
    m->eval();
    models.push_back(m);
  }
  return greedy_accuracy(models, data_.test, config_.data_config());
}

void Trainer::log_gradients(const std::string& path, std::int64_t every) {
  grad_log_ = std::make_unique<train::LinesOutput>(path, train::LinesOutput::Kind::Log);  // a fresh log for this run
  grad_log_every_ = every;
}

// One JSON line: the step, and per parameter |grad|, |w| and |w_after - w_before| / |w_before|.
void Trainer::append_grad_log(std::int64_t epoch, const std::vector<std::pair<std::string, Tensor>>& before) const {
  NoGradGuard no_grad;  // the update below is arithmetic for the log, not part of training
  nlohmann::json params = nlohmann::json::object();
  const auto now = model().named_parameters();
  for (std::size_t i = 0; i < now.size(); ++i) {
    const Tensor& w0 = before[i].second;
    const Tensor& w1 = now[i].second;
    const double gn = w1.grad().defined() ? squared_norm(w1.grad()) : 0.0;
    const double wn = squared_norm(w0), un = squared_norm(sub(w1, w0));
    params[now[i].first] = {{"grad_norm", std::sqrt(gn)}, {"weight_norm", std::sqrt(wn)},
                            {"update_ratio", wn > 0 ? std::sqrt(un / wn) : 0.0}};
  }
  grad_log_->append(nlohmann::json{{"step", global_step_}, {"epoch", epoch}, {"params", params}}.dump() + "\n");
}

void Trainer::save(const std::string& path) const {
  train::save_checkpoint(path, kFormat, model(), *optimizer_,
                         {.config = config_.to_json(),
                          .epoch = epochs_done(),
                          .global_step = global_step_,
                          .generators = {{"dropout_rng", model().dropout_generator().state()}},
                          .history = history_json(history_).dump(),
                          .epoch_progress = progress_.steps > 0 ? progress_json(progress_).dump() : "",
                          .extra = {{"model", model().options().to_json()}}});
}

namespace {

// The metrics history (train/history.h): every field a finite number, entry N of epoch N, `epochs` entries.
std::vector<EpochMetrics> parse_history(const std::string& text, std::int64_t epochs) {
  const auto entries = train::parse_history(text, {{"loss"}, {"train_token_acc"}, {"test_seq_acc"}, {"test_token_acc"},
                                                   {"lr"}, {"epoch_s"}, {"epoch"}}, /*non_negative=*/false,
                                            static_cast<std::size_t>(std::max<std::int64_t>(epochs, 0)));
  std::vector<EpochMetrics> history;
  for (const std::vector<double>& v : entries) {
    const EpochMetrics m{.epoch = static_cast<std::int64_t>(history.size()) + 1, .loss = v[0], .train_token_acc = v[1],
                         .test_seq_acc = v[2], .test_token_acc = v[3], .lr = v[4], .epoch_s = v[5]};
    if (v[6] != static_cast<double>(m.epoch))
      throw std::invalid_argument(fmt::format("history entry {}: 'epoch' must be {}", m.epoch, m.epoch));
    history.push_back(m);
  }
  return history;
}

// Where a checkpoint's epoch stood (its metadata 'epoch_progress'): counts whole numbers in range, sums finite.
Trainer::EpochProgress parse_progress(const std::string& text, std::int64_t steps_per_epoch) {
  // A flat object of 7 numbers (progress_json); room for as many again.
  const nlohmann::json j = parse_json_bounded(text, {.max_depth = 1, .max_values = 15}, "metadata 'epoch_progress'");
  if (!j.is_object()) throw std::invalid_argument("metadata 'epoch_progress' is not a JSON object");
  auto count = [&](const char* key, std::int64_t most) {
    if (!j.contains(key) || !j.at(key).is_number_unsigned() ||
        j.at(key).get<std::uint64_t>() > static_cast<std::uint64_t>(most))
      throw std::invalid_argument(fmt::format("epoch_progress: '{}' must be a whole number from 0 to {}", key, most));
    return j.at(key).get<std::int64_t>();
  };
  auto number = [&](const char* key) {
    if (!j.contains(key) || !j.at(key).is_number() || !std::isfinite(j.at(key).get<double>()) ||
        j.at(key).get<double>() < 0)
      throw std::invalid_argument(std::string("epoch_progress: '") + key + "' must be a finite number >= 0");
    return j.at(key).get<double>();
  };
  constexpr std::int64_t kMost = std::int64_t{1} << 53;  // exact in a double
  Trainer::EpochProgress p;
  p.steps = count("steps", steps_per_epoch);
  p.loss_sum = number("loss_sum");
  p.teacher_forced = {.right_rows = count("right_rows", kMost), .rows = count("rows", kMost),
                      .right_tokens = count("right_tokens", kMost), .tokens = count("tokens", kMost)};
  p.elapsed_s = number("elapsed_s");
  return p;
}

// A v1 file's metadata as v2 writes it (v2 keeps the model's options apart, as "model"): v1's "config" held them under
// their flags' spellings ("d_model", "heads", "positions", ...), which the table reads as every row's; the
// vocabularies and the dropout seed follow from the run's data and seed (model_options), as they always have.
void upgrade_from_v1(std::map<std::string, std::string>& metadata) {
  if (!metadata.count("config")) throw std::invalid_argument("metadata has no 'config'");
  const TrainConfig c = train::run_config_from_json(config_table(), metadata.at("config"),
                                                    ConfigTable<TrainConfig>::Keys::every_row);
  metadata["model"] = c.model_options().to_json();
  metadata["config"] = c.to_json();
  metadata["format"] = kFormat.format;
}

// The file, read whole, in v2's layout (a v1 file upgraded); throws std::runtime_error naming it.
SafetensorsFile read_file(const std::string& path) {
  SafetensorsFile f = train::read_checkpoint(path, kFormat);
  try {
    if (f.metadata.at("format") == kFormatV1) upgrade_from_v1(f.metadata);
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": its config is refused: " + e.what());
  }
  return f;
}

// The config stored in a checkpoint already read (read_file), with its model's options; throws std::runtime_error
// naming the file.
TrainConfig checkpoint_config(const SafetensorsFile& f, const std::string& path) {
  const std::string& config = train::checkpoint_config(f, path);
  TrainConfig c;
  try {
    c = TrainConfig::from_json(config);
    if (!f.metadata.count("model")) throw std::invalid_argument("metadata has no 'model'");
    const nn::Seq2SeqOptions model = nn::Seq2SeqOptions::from_json(f.metadata.at("model"));
    c.model = model;
    c.validate();  // bounded before anything is allocated for it
    if (c.model_options() != model)
      throw std::invalid_argument(fmt::format("its model's vocabularies ({}, {}, {}) or dropout seed ({}) are not those "
                                              "its config's data and seed make", model.src_vocab, model.tgt_vocab,
                                              model.out_vocab, model.dropout_seed));
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": its config is refused: " + e.what());
  }
  // The weights the config describes against those the file holds, before a trainer builds its model from the config
  // (the tutorial's model is another's: Trainer refuses that config before it builds anything).
  if (c.arch == Arch::transformer) train::check_model_size(f, path, nn::state_dict_numel(c.model_options()));
  return c;
}

}  // namespace

TrainConfig read_checkpoint_config(const std::string& path) { return checkpoint_config(read_file(path), path); }

std::int64_t read_checkpoint_epoch(const std::string& path) {
  const SafetensorsFile f = read_file(path);
  checkpoint_config(f, path);  // a cppgrad-reverse checkpoint at all
  try {
    return train::metadata_count(f.metadata, "epoch");
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
}

// Everything is checked before anything is changed, so a refused file leaves this trainer as it was.
void Trainer::load(const std::string& path) {
  const SafetensorsFile f = read_file(path);  // read once: the config and the tensors
  const TrainConfig saved = checkpoint_config(f, path);
  const auto differ = config_.mismatched_for_resume(saved);
  if (!differ.empty()) {
    std::string keys;
    for (const auto& k : differ) keys += (keys.empty() ? "" : ", ") + k;
    throw std::runtime_error("checkpoint " + path + " was trained with another configuration (" + keys +
                             " differ); resume with the same flags or start a new run");
  }
  const train::CheckpointState state = train::checkpoint_state(f, path, {"dropout_rng"});
  std::vector<EpochMetrics> history;
  EpochProgress progress;
  try {
    history = parse_history(state.meta.history, state.meta.epoch);
    if (state.meta.epoch != static_cast<std::int64_t>(history.size()))
      throw std::invalid_argument(fmt::format("epoch {} but a history of {} epochs", state.meta.epoch, history.size()));
    if (!state.meta.epoch_progress.empty()) progress = parse_progress(state.meta.epoch_progress, steps_per_epoch());
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  train::restore_checkpoint(state, path, model(), *optimizer_);
  model().dropout_generator().set_state(state.meta.generators.at("dropout_rng"));
  global_step_ = state.meta.global_step;
  history_ = history;
  progress_ = progress;
  if (processes_) {  // every process resumed the same checkpoint: the same step, and rank 0's weights
    train::check_processes_agree(*processes_, "resumed checkpoint (its step)", std::to_string(global_step_));
    processes_->broadcast(model().parameters());
  }
}

}  // namespace cppgrad::reverse
