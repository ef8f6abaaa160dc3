// The floor under a LoRA finetune's step at GPT-2 124M, batch 4 x 64 on two cores (docs/performance.md, "GPT-2 124M,
// a LoRA finetune's step"): the products by the frozen weights, which the step cannot skip, and nothing else. Each
// shard (128 rows) multiplies by every block's four matrices and by the tied head, forward (y = x W^T) and for the
// input's gradient (dx = g W); the weights' own gradients are not computed (they are frozen). That is 63.2 GFLOP a
// thread, over 12 x 4 distinct weights and the head, 490 MB, as a step reads them.
//
//   OMP_NUM_THREADS=1 build/bin/cppgrad-bench --benchmark_filter=LoRAFrozenProducts
//
// library: 0 cppgrad's kernel, 1 OpenBLAS's cblas_sgemm, 2 oneDNN's dnnl_sgemm (bench/blas_libraries.h; a library
// that is not installed is not registered), each called on one thread. split: below. threads:2 is the step's case.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/blas_libraries.h"
#include "core/generator.h"
#include "core/kernels/gemm.h"
#include "core/parallel.h"
#include "core/tensor.h"

namespace cppgrad {
namespace {

enum Library { kCppgrad = 0, kOpenBlas = 1, kOneDnn = 2 };

const bench::CblasSgemm openblas = bench::load_openblas_sgemm(1);
const bench::DnnlSgemm onednn = bench::load_onednn_sgemm();

struct Weight {
  std::int64_t out, in;  // W: [out, in], as nn::Linear holds it
  Tensor w;
};

// The frozen weights, in the order a step uses them: every block's c_attn, attn.c_proj, c_fc, mlp.c_proj, then the
// head (wte). The shards' threads read the same memory, as the replicas of a step do.
std::vector<Weight> gpt2_124m_frozen_weights(std::uint64_t seed) {
  constexpr std::array<std::array<std::int64_t, 2>, 4> kBlock = {{{2304, 768}, {768, 768}, {3072, 768}, {768, 3072}}};
  Generator gen(seed);
  std::vector<Weight> weights;
  for (int b = 0; b < 12; ++b)
    for (auto [out, in] : kBlock) weights.push_back({out, in, Tensor::randn({out, in}, gen)});
  weights.push_back({50257, 768, Tensor::randn({50257, 768}, gen)});
  return weights;
}

// C[M, N] = A[M, K] @ (W^T when forward, else W), W's rows ldw apart.
void product(Library library, bool forward, std::int64_t M, std::int64_t N, std::int64_t K, const float* a,
             const float* w, std::int64_t ldw, float* c) {
  using kernels::MatrixRef;
  if (library == kCppgrad) {
    const MatrixRef<float> W = forward ? MatrixRef<float>{w, 1, ldw} : MatrixRef<float>{w, ldw, 1};
    kernels::gemm_at_level(kernels::simd_level(), M, N, K, {a, K, 1}, W, c);
  } else if (library == kOpenBlas) {
    openblas(bench::kRowMajor, bench::kNoTrans, forward ? bench::kTrans : bench::kNoTrans, static_cast<int>(M),
             static_cast<int>(N), static_cast<int>(K), 1.0f, a, static_cast<int>(K), w, static_cast<int>(ldw), 0.0f,
             c, static_cast<int>(N));
  } else {
    onednn('N', forward ? 'T' : 'N', M, N, K, 1.0f, a, K, w, ldw, 0.0f, c, N);
  }
}

// How the two threads share a step's products (the same work either way, 63.2 GFLOP a thread):
// - kShards: as the data-parallel step runs them, each thread its shard's 128 rows by every whole weight;
// - kColumns: each thread both shards' 256 rows by half of each weight's outputs (forward, W's rows; the input's
//   gradient, W's columns), so each weight is read once an orientation instead of once a thread. A step does not run
//   this way (the shards would meet at every product); it is the floor if it did;
// - kCopies: as kShards, each thread with a copy of the weights of its own: what the shards' sharing costs.
enum Split { kShards = 0, kColumns = 1, kCopies = 2 };

// One thread's part of a step's frozen products: the forward products in the model's order, then the input's
// gradients in backward's.
struct ThreadProducts {
  ThreadProducts(const std::vector<Weight>& weights, Split split, int thread, int threads)
      : weights(weights),
        part(split == kColumns ? thread : 0),
        parts(split == kColumns ? threads : 1),
        rows(128 * parts) {
    Generator gen(100 + static_cast<std::uint64_t>(thread));
    x = Tensor::randn({rows, kWidest}, gen), g = Tensor::randn({rows, kWidest}, gen);
    c.resize(static_cast<std::size_t>(rows * kWidest));
  }
  // Outputs [begin, end) of n, this thread's share.
  std::int64_t begin(std::int64_t n) const { return n * part / parts; }
  std::int64_t end(std::int64_t n) const { return n * (part + 1) / parts; }
  void run(Library library) {
    for (const Weight& w : weights) {  // forward: [rows, in] @ W[outputs]^T
      const std::int64_t j0 = begin(w.out), n = end(w.out) - j0;
      product(library, true, rows, n, w.in, x.data<float>(), w.w.data<float>() + j0 * w.in, w.in, c.data());
    }
    for (auto it = weights.rbegin(); it != weights.rend(); ++it) {  // the input's gradient: [rows, out] @ W[:, cols]
      const std::int64_t j0 = begin(it->in), n = end(it->in) - j0;
      product(library, false, rows, n, it->out, g.data<float>(), it->w.data<float>() + j0, it->in, c.data());
    }
  }
  double flops() const {
    double f = 0;
    for (const Weight& w : weights)
      f += 2.0 * rows * static_cast<double>((end(w.out) - begin(w.out)) * w.in + w.out * (end(w.in) - begin(w.in)));
    return f;
  }
  static constexpr std::int64_t kWidest = 50257;
  const std::vector<Weight>& weights;
  int part, parts;     // this thread's share of each product's outputs: [n * part / parts, n * (part + 1) / parts)
  std::int64_t rows;   // 128 a shard
  Tensor x, g;
  std::vector<float> c;
};

// state.range: the library, the split, the threads (running at once). The time is the slower thread's, for one
// step's products.
void BM_LoRAFrozenProducts124M(benchmark::State& state) {
  const auto library = static_cast<Library>(state.range(0));
  const auto split = static_cast<Split>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  if (max_parallel_workers() != 1) return state.SkipWithError("run with OMP_NUM_THREADS=1: each thread is a shard's");
  if (library == kOpenBlas) state.SetLabel(std::string("OpenBLAS core ") + bench::openblas_core());
  static const std::vector<Weight> weights = gpt2_124m_frozen_weights(0);
  std::vector<std::vector<Weight>> copies;  // kCopies: threads 1.. read these
  for (int t = 1; split == kCopies && t < threads; ++t) copies.push_back(gpt2_124m_frozen_weights(t));
  std::vector<std::unique_ptr<ThreadProducts>> parts;
  for (int t = 0; t < threads; ++t)
    parts.push_back(std::make_unique<ThreadProducts>(t == 0 || copies.empty() ? weights : copies[t - 1], split, t,
                                                     threads));
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> running;
    for (int t = 1; t < threads; ++t) running.emplace_back([&, t] { parts[t]->run(library); });
    parts[0]->run(library);
    for (std::thread& r : running) r.join();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // Each thread's rate, against one core's peak.
  state.counters["GFLOP/s"] = benchmark::Counter(parts[0]->flops(), benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

[[maybe_unused]] const bool registered = [] {
  for (Library library : {kCppgrad, kOpenBlas, kOneDnn}) {
    if ((library == kOpenBlas && openblas == nullptr) || (library == kOneDnn && onednn == nullptr)) continue;
    benchmark::RegisterBenchmark("BM_LoRAFrozenProducts124M", BM_LoRAFrozenProducts124M)
        ->ArgNames({"library", "split", "threads"})
        ->Args({library, kShards, 1})
        ->Args({library, kShards, 2})
        ->Args({library, kColumns, 2})
        ->Args({library, kCopies, 2})
        ->UseManualTime()
        ->Iterations(6)
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace cppgrad
