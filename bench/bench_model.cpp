// Whole-model benchmarks: one training step of the default reversal model, and greedy decoding of the test set.
#include <benchmark/benchmark.h>

#include <omp.h>

#include <algorithm>
#include <optional>

#include "core/autograd.h"
#include "optim/adam.h"
#include "models/reverse/greedy.h"
#include "models/reverse/trainer.h"

namespace {

using namespace cppgrad;

// Runs a benchmark body with OpenMP limited to `threads` (the trainer's workers and the kernels' loops), then
// restores the previous limit.
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads) : previous_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ThreadLimit() { omp_set_num_threads(previous_); }

 private:
  int previous_;
};

// One full training step as the trainer runs it (Trainer::train_step: forward and backward split across the
// worker threads, gradients summed, Adam) on one batch of 64 rows.
void run_train_steps(benchmark::State& state, reverse::TrainConfig config) {
  config.train_size = config.batch_size;
  config.test_size = 64;
  reverse::Trainer trainer(config);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(config.batch_size));
  for (std::int64_t i = 0; i < config.batch_size; ++i) rows[i] = i;
  for (int i = 0; i < 2; ++i) trainer.train_step(rows);  // warm-up, as PyTorch's script does: caches fill, Adam's moments appear
  for (auto _ : state) benchmark::DoNotOptimize(trainer.train_step(rows).loss);
  state.counters["steps/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workers"] = trainer.workers();
}

// The default model (d_model 32, 4 heads, 2+2 layers, d_ff 64), batch 64, on OpenMP's threads.
// Arg 1: with anomaly detection on (every result and gradient scanned for NaN/Inf); 0: off, the default.
void BM_TrainStep(benchmark::State& state) {
  std::optional<DetectAnomalyGuard> anomaly;
  if (state.range(0)) anomaly.emplace();
  run_train_steps(state, reverse::TrainConfig{});
}
BENCHMARK(BM_TrainStep)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

// The larger configuration of the speed issue: d_model 256, 8 heads, d_ff 1024, sequences of 64, batch 64; the
// argument is the thread count.
void BM_TrainStepLarge(benchmark::State& state) {
  const ThreadLimit limit(static_cast<int>(state.range(0)));
  reverse::TrainConfig config;
  config.model.d_model = 256;
  config.model.n_heads = 8;
  config.model.d_ff = 1024;
  config.seq_len = 64;
  config.model.max_len = 128;
  run_train_steps(state, config);
}
BENCHMARK(BM_TrainStepLarge)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// Step time as the model grows: args (d_model, sequence length); 4 heads, d_ff = 2 d_model, batch 64, on
// OpenMP's threads. bench/pytorch/step_scaling.py measures PyTorch at the same sizes.
void BM_TrainStepScaling(benchmark::State& state) {
  reverse::TrainConfig config;
  config.model.d_model = state.range(0);
  config.model.d_ff = 2 * config.model.d_model;
  config.seq_len = state.range(1);
  config.model.max_len = std::max<std::int64_t>(50, config.seq_len + 1);
  run_train_steps(state, config);
}
BENCHMARK(BM_TrainStepScaling)
    ->ArgNames({"d_model", "len"})
    ->Args({32, 8})
    ->Args({128, 8})
    ->Args({512, 8})
    ->Args({32, 64})
    ->Args({32, 256})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Greedy decoding of the default 500 test sequences. Arg 1: as the trainer evaluates (incremental decoding
// with key/value caches, the rows split across the worker threads); 0: the reference, re-decoding the whole
// prefix at every step on one model.
void BM_GreedyDecode(benchmark::State& state) {
  reverse::TrainConfig config;
  reverse::Trainer trainer(config);
  trainer.model().eval();
  const data::ReversalConfig dcfg = config.data_config();
  const auto& test = trainer.data().test;
  for (auto _ : state) {
    if (state.range(0)) {
      benchmark::DoNotOptimize(trainer.evaluate().sequence);
    } else {
      Tensor pred = reverse::greedy_decode_full(trainer.model(), test.src, Tensor(), dcfg);
      benchmark::DoNotOptimize(pred.data<std::int64_t>());
    }
  }
}
BENCHMARK(BM_GreedyDecode)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
