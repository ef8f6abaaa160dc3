// One GPT training step (nn/gpt.h): forward with targets, the loss's backward, AdamW, float32, on random tokens
// (a fixed seed), at the shapes of issue 25's speed table. The PyTorch GPT anchor (gpt/gpt_pytorch.py) times PyTorch
// at the same shapes (its arguments: V L NH C T B steps threads).
//
// Two threads run the step as cppgrad-gpt's trainer does: the model and one replica sharing its parameters
// (Module::share_parameters_with) each take half the batch on their own thread (core/parallel.h), their losses
// weighted by their share of the targets, the replica's gradients summed into the model's, then AdamW. (The
// trainer's own step, train/gpt_step.h, sums its shards over a fixed tree; this is the plain split the README's
// speed table measured.)
#include <benchmark/benchmark.h>

#include <omp.h>

#include <memory>
#include <vector>

#include "core/kernels/contention.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "nn/gpt.h"
#include "optim/adam.h"
#include "train/data_parallel.h"

namespace {

using namespace cppgrad;

// Adds the gradients of workers 1..n-1 into worker 0's, in worker order. In place: no allocation.
void sum_replica_gradients(const std::vector<std::vector<Tensor>>& worker_params, int n) {
  const std::vector<Tensor>& master = worker_params[0];
  for (int w = 1; w < n; ++w) {
    const std::vector<Tensor>& replica = worker_params[w];
    for (std::size_t i = 0; i < master.size(); ++i) {
      const Tensor g = replica[i].grad(), mine = master[i].grad();
      if (!g.defined()) continue;
      if (mine.defined()) mine.add_(g);
      else master[i].set_grad(g.clone());
    }
  }
}

struct GptShape {
  std::int64_t vocab, d, layers, heads, context, batch;
};

// Model FLOPs of one step, nanoGPT's estimate_mfu: per token 6 N (forward 2 N, backward 4 N: every weight is one
// multiply-add per token each way, twice in backward) plus the attention's 12 L H Q T = 12 L C T (Q K^T and P V,
// forward and backward, over every key: the causal half is not subtracted), with N the parameters but the
// position table (a lookup, no multiplies; wte counts, it is lm_head too); times B T tokens.
double model_flops_per_step(const GptShape& s, std::int64_t params) {
  const double n = static_cast<double>(params - s.context * s.d);
  const double per_token = 6.0 * n + 12.0 * static_cast<double>(s.layers * s.d * s.context);
  return per_token * static_cast<double>(s.batch * s.context);
}

// The model and a replica per extra thread, AdamW as cppgrad-gpt trains (lr 5e-4, weight decay 0.01, betas
// 0.9 / 0.99), and one batch of random tokens split between them.
class GptStep {
 public:
  GptStep(const GptShape& s, int threads) {
    const nn::GPTConfig config{.block_size = s.context, .vocab_size = s.vocab, .n_layer = s.layers,
                               .n_head = s.heads, .n_embd = s.d};
    Generator init(0);
    workers_.push_back(std::make_unique<nn::GPT>(config, init));
    for (int w = 1; w < threads; ++w) {
      Generator scratch(0);
      workers_.push_back(std::make_unique<nn::GPT>(config, scratch));
      workers_.back()->share_parameters_with(*workers_[0]);
    }
    for (const auto& m : workers_) worker_params_.push_back(m->parameters());
    adamw_ = std::make_unique<optim::Adam>(
        workers_[0]->named_parameters(),
        optim::AdamOptions{.lr = 5e-4, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = 0.01,
                           .decoupled_weight_decay = true});
    Generator data(1);
    const Tensor idx = Tensor::randint(0, s.vocab, {s.batch, s.context}, data);
    const Tensor targets = Tensor::randint(0, s.vocab, {s.batch, s.context}, data);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(s.batch)), counts;
    for (std::int64_t i = 0; i < s.batch; ++i) rows[i] = i;
    for (int w = 0; w < threads; ++w) {
      const std::vector<std::int64_t> slice = train::worker_slice(rows, w, threads);
      const std::int64_t first = slice.front(), rows_w = static_cast<std::int64_t>(slice.size());  // contiguous
      idx_.push_back(idx.narrow(0, first, rows_w).contiguous());
      targets_.push_back(targets.narrow(0, first, rows_w).contiguous());
      counts.push_back(targets_.back().numel());
    }
    shares_ = train::loss_shares(counts);
  }

  std::int64_t params() const { return workers_[0]->num_parameters(); }

  void run() {
    const int n = static_cast<int>(workers_.size());
    adamw_->zero_grad();
    run_in_parallel(n, [&](int w) {
      if (w > 0) workers_[w]->zero_grad();
      const nn::GPTOutput o = workers_[w]->forward(idx_[w], targets_[w]);  // logits [b, T, V], loss []
      o.loss.backward(Tensor::scalar(shares_[w], o.loss.dtype()));
    });
    sum_replica_gradients(worker_params_, n);
    adamw_->step();
  }

 private:
  std::vector<std::unique_ptr<nn::GPT>> workers_;
  std::vector<std::vector<Tensor>> worker_params_;
  std::unique_ptr<optim::Adam> adamw_;
  std::vector<Tensor> idx_, targets_;
  std::vector<double> shares_;
};

// Arg: the thread count (OpenMP's setting, which max_parallel_workers reads, restored afterwards). The CPU column is
// the process's (both threads'), so that on a shared machine CPU time per step is comparable across thread counts.
void BM_GptStep(benchmark::State& state, GptShape shape) {
  const int threads = static_cast<int>(state.range(0)), previous = omp_get_max_threads();
  omp_set_num_threads(threads);
  {
    GptStep step(shape, threads);
    // The thread pool judges from each job's timing whether its workers pay (core/kernels/contention.h). The large
    // model's initialisation runs jobs of a few hundred microseconds (mul over [1024, 256] weights) on a worker that
    // had been asleep; its wake-up made three of them in a row not pay, and the pool then ran the next 64 jobs, every
    // step measured here, on the caller alone (two threads: 152 ms a step, as one; with a fresh judgement, 77 ms).
    // Training gets over it once a probe step pays; measured here is that steady state, from a fresh judgement.
    kernels::exchange_pool_contention(kernels::Contention{});
    for (int i = 0; i < 2; ++i) step.run();  // warm-up, as PyTorch's script does: caches fill, AdamW's moments appear
    for (auto _ : state) step.run();
    const double flops = model_flops_per_step(shape, step.params());
    state.counters["params"] = static_cast<double>(step.params());
    state.counters["GFLOP/step"] = flops / 1e9;
    state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  }
  omp_set_num_threads(previous);
}
// The words anchor (makemore's names on a word list): vocab 70, d 64, 4 layers, 4 heads, context 24, batch 32.
BENCHMARK_CAPTURE(BM_GptStep, words, GptShape{70, 64, 4, 4, 24, 32})
    ->ArgName("threads")->Arg(1)->Arg(2)->MeasureProcessCPUTime()->UseRealTime()->Unit(benchmark::kMillisecond);
// The large configuration: vocab 64, d 256, 4 layers, 4 heads, context 128, batch 8.
BENCHMARK_CAPTURE(BM_GptStep, large, GptShape{64, 256, 4, 4, 128, 8})
    ->ArgName("threads")->Arg(1)->Arg(2)->MeasureProcessCPUTime()->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
