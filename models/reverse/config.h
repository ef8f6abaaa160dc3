#pragma once
// Everything a reversal run depends on. Checkpoints store it (as JSON in their metadata), so a resumed run can
// check it continues the same experiment.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/reversal.h"
#include "nn/seq2seq.h"
#include "optim/schedule.h"
#include "core/config_table.h"

namespace cppgrad::reverse {

// The largest values a run accepts, from a flag or from a checkpoint's config: every size is bounded before
// anything is allocated, so a typo cannot ask for terabytes. The estimates below bound what a step holds.
inline constexpr std::int64_t kMaxEpochs = 1'000'000;
inline constexpr std::int64_t kMaxVocab = 100'000;
inline constexpr std::int64_t kMaxSeqLen = 1'024;             // --seq-len, --max-len, --positions
inline constexpr std::int64_t kMaxExamples = 1'000'000;       // --train-size, --test-size
inline constexpr std::int64_t kMaxDataTokens = 50'000'000;    // (train + test sequences) x length
inline constexpr std::int64_t kMaxBatch = 65'536;
inline constexpr std::int64_t kMaxParameters = 200'000'000;   // 0.8 GB of float32 weights, x4 with Adam and grads
inline constexpr std::int64_t kMaxActivations = 1'000'000'000;  // floats a step's graph holds, roughly (4 GB)
inline constexpr std::int64_t kMaxThreads = 256;
inline constexpr std::int64_t kMaxShards = 64;
inline constexpr std::int64_t kMaxWarmupSteps = 1'000'000'000;

// transformer: the honest model; tutorial: the seed tutorial's, fed the target (models/reverse/tutorial.h).
enum class Arch { transformer, tutorial };
// adam: L2 weight decay; adamw: decoupled; sgd: with momentum.
enum class OptimizerKind { adam, adamw, sgd };

// The names the flags take, and the values they stand for.
inline const Choices<Arch> kArchs = {{"transformer", Arch::transformer}, {"tutorial", Arch::tutorial}};
inline const Choices<OptimizerKind> kOptimizers = {{"adam", OptimizerKind::adam}, {"adamw", OptimizerKind::adamw},
                                                          {"sgd", OptimizerKind::sgd}};
inline const Choices<optim::Schedule::Kind> kSchedules = {{"constant", optim::Schedule::Kind::Constant},
                                                                 {"step", optim::Schedule::Kind::Step},
                                                                 {"cosine", optim::Schedule::Kind::WarmupCosine}};

// The run's fields; each is declared once more, as a row of the table in config.cpp (its flag, help, bound and JSON
// key), and nowhere else. The model's are nn::Seq2SeqOptions' (nn/seq2seq.cpp's rows, nested): their JSON is a
// checkpoint's "model", apart from this "config".
struct TrainConfig {
  // data (the seed tutorial's setting by default)
  std::int64_t vocab = 10;
  std::int64_t seq_len = 8;
  std::int64_t min_len = 0;  // 0: use seq_len (fixed length)
  std::int64_t max_len = 0;
  std::int64_t train_size = 5000;
  std::int64_t test_size = 500;
  // The model's options (nn::Seq2SeqOptions, whose rows the table takes in: --d-model, --heads, --encoder-layers,
  // --decoder-layers, --d-ff, --positions, --dropout, --attention); the vocabularies and the dropout seed follow from
  // the data and the seed (model_options).
  nn::Seq2SeqOptions model;
  Arch arch = Arch::transformer;
  // optimisation
  std::int64_t epochs = 30;
  std::int64_t batch_size = 64;
  double lr = 1e-3;
  OptimizerKind optimizer = OptimizerKind::adam;
  double weight_decay = 0.0;
  double momentum = 0.9;           // sgd only
  optim::Schedule::Kind schedule = optim::Schedule::Kind::Constant;
  std::int64_t warmup_steps = 0;
  double clip_grad = 0.0;  // 0: no clipping
  std::uint64_t seed = 42;
  std::int64_t threads = 0;  // 0: OpenMP's default
  // Each batch cut into this many shards (a power of two): the same numbers on any threads. 0: the default,
  // train::default_shards(batch_size), which the run stores in its checkpoint (with_shards).
  std::int64_t shards = 0;

  data::ReversalConfig data_config() const;
  nn::Seq2SeqOptions model_options() const;
  // Throws std::invalid_argument with a one-line reason, naming the flag, for any value out of range (the limits
  // above included).
  void validate() const;
  // Rough sizes of the model and of one training step, for the limits (exact enough to stop a typo).
  std::int64_t estimated_parameters() const;
  std::int64_t estimated_activations() const;

  // This config with shards chosen: --shards, or when it is 0 train::default_shards of the batch size.
  TrainConfig with_shards() const;

  std::string to_json() const;  // the run's rows; the model's are model_options().to_json()
  // The defaults, with every key the JSON has (an older checkpoint lacks the fields added since); throws
  // std::invalid_argument on a malformed config.
  static TrainConfig from_json(const std::string& json);
  // The keys that must agree for a checkpoint to be resumed (everything but epochs and threads).
  std::vector<std::string> mismatched_for_resume(const TrainConfig& other) const;
};

// The table every field is declared in (config.cpp): the flags of `train` and `sweep`, their --help, the bounds, the
// JSON.
const ConfigTable<TrainConfig>& config_table();

}  // namespace cppgrad::reverse
