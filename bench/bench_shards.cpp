// What the shards of a batch (train/data_parallel.h) cost one thread: the trainers' own steps at a given --shards,
// on one OpenMP thread, against --shards 1. docs/performance.md ("The default shards") holds the latest, and
// docs/results/2026-11-default-shards-history.md the measurements that chose train::default_shards.
#include <benchmark/benchmark.h>

#include <omp.h>

#include <algorithm>
#include <filesystem>

#include "models/gpt/trainer.h"
#include "models/reverse/trainer.h"

namespace {

using namespace cppgrad;

// One OpenMP thread for the benchmark's body (the trainers' workers and the kernels' loops), restored afterwards.
class OneThread {
 public:
  OneThread() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(previous_); }

 private:
  int previous_;
};

// The reversal trainer's step on one batch of 64 rows, as BM_TrainStepScaling builds it. Args: d_model, sequence
// length, shards.
void BM_ReverseShards(benchmark::State& state) {
  const OneThread one;
  reverse::TrainConfig config;
  config.model.d_model = state.range(0), config.model.d_ff = 2 * config.model.d_model;
  config.seq_len = state.range(1), config.model.max_len = std::max<std::int64_t>(50, config.seq_len + 1);
  config.shards = state.range(2), config.threads = 1;
  config.train_size = config.batch_size, config.test_size = 64;
  reverse::Trainer trainer(config);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(config.batch_size));
  for (std::int64_t i = 0; i < config.batch_size; ++i) rows[i] = i;
  for (int i = 0; i < 2; ++i) trainer.train_step(rows);  // warm-up: caches fill, Adam's moments appear
  for (auto _ : state) benchmark::DoNotOptimize(trainer.train_step(rows).loss);
}
BENCHMARK(BM_ReverseShards)
    ->ArgNames({"d_model", "len", "shards"})
    ->ArgsProduct({{32, 128, 512}, {8}, {1, 2, 4, 8}})
    ->ArgsProduct({{32}, {64, 256}, {1, 2, 4, 8}})
    ->Unit(benchmark::kMillisecond);

// The GPT trainer's step (random batches of the word list). Args: the GPT shape (0: the words anchor, d 64, 4
// layers, context 24 (its longest word), batch 32; 1: the large configuration, d 256, 4 layers, the list as a
// running text in windows of 128, batch 8), shards.
void BM_GptShards(benchmark::State& state) {
  gpt::TrainConfig config;
  if (!std::filesystem::exists(config.data)) return state.SkipWithError("no word list (package wamerican)");
  const OneThread one;
  if (state.range(0) == 1) {
    config.format = data::TextFormat::text, config.context = 128, config.batch_size = 8;
    config.model.n_embd = 256;
  }
  config.shards = state.range(1), config.threads = 1, config.steps = 1'000'000'000;
  gpt::Trainer trainer(config);
  for (int i = 0; i < 2; ++i) trainer.train_step();
  for (auto _ : state) benchmark::DoNotOptimize(trainer.train_step());
}
BENCHMARK(BM_GptShards)->ArgNames({"large", "shards"})->ArgsProduct({{0, 1}, {1, 2, 4, 8}})->Unit(benchmark::kMillisecond);

}  // namespace
