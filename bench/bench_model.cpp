// Whole-model benchmarks: one training step of the default reversal model, and greedy decoding of the test set.
#include <benchmark/benchmark.h>

#include <optional>

#include "core/ops.h"
#include "optim/adam.h"
#include "reverse/greedy.h"
#include "reverse/trainer.h"

namespace {

using namespace cppgrad;

// Forward, backward and Adam on one batch of 64: the default model (d_model 32, 4 heads, 2+2 layers, d_ff 64).
// Arg 1: with anomaly detection on (every result and gradient scanned for NaN/Inf); 0: off, the default.
void BM_TrainStep(benchmark::State& state) {
  std::optional<DetectAnomalyGuard> anomaly;
  if (state.range(0)) anomaly.emplace();
  reverse::TrainConfig config;
  config.train_size = 64;
  config.test_size = 64;
  reverse::Trainer trainer(config);
  auto& model = trainer.model();
  auto& opt = trainer.optimizer();
  std::vector<std::int64_t> rows(64);
  for (std::int64_t i = 0; i < 64; ++i) rows[i] = i;
  const data::Batch b = data::gather_batch(trainer.data().train, rows, false);
  for (auto _ : state) {
    opt.zero_grad();
    Tensor loss = cross_entropy(model.forward(b.src, b.dec_in), b.target);
    loss.backward();
    opt.step();
    benchmark::DoNotOptimize(loss.item());
  }
  state.counters["steps/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TrainStep)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

// Greedy decoding of the default 500 test sequences; arg 1: incremental (cached), 0: full re-decoding.
void BM_GreedyDecode(benchmark::State& state) {
  reverse::TrainConfig config;
  reverse::Trainer trainer(config);
  trainer.model().eval();
  const data::ReversalConfig dcfg = config.data_config();
  const auto& test = trainer.data().test;
  for (auto _ : state) {
    Tensor pred = state.range(0) ? reverse::greedy_decode(trainer.model(), test.src, Tensor(), dcfg)
                                 : reverse::greedy_decode_full(trainer.model(), test.src, Tensor(), dcfg);
    benchmark::DoNotOptimize(pred.data<std::int64_t>());
  }
}
BENCHMARK(BM_GreedyDecode)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
