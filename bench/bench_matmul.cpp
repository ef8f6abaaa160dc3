// matmul throughput: square products, the reversal transformer's shapes, and the transposed-operand products
// its backward runs (da = g @ b^T, db = a^T @ g). Every figure is wall-clock time (UseRealTime), since the
// kernels split large products over OpenMP threads, and GFLOPS = 2*M*N*K per call.
// Run with OMP_NUM_THREADS=1 for single-core figures.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "core/generator.h"
#include "core/ops/matmul.h"
#include "core/tensor.h"

namespace {

using cppgrad::Generator;
using cppgrad::Shape;
using cppgrad::Tensor;

void set_flops(benchmark::State& state, double flops_per_call) {
  state.counters["GFLOPS"] = benchmark::Counter(flops_per_call, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

// a: (N, N)  b: (N, N) -> (N, N), both contiguous.
void BM_MatmulSquare(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Generator gen(0);
  const Tensor a = Tensor::randn({n, n}, gen), b = Tensor::randn({n, n}, gen);
  for (auto _ : state) {
    Tensor c = cppgrad::matmul(a, b);
    benchmark::DoNotOptimize(c.data<float>());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_MatmulSquare)->Arg(64)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->UseRealTime();

// a: (N, N)  b^T: a transposed view of a contiguous (N, N) -> (N, N). The path of da = g @ b^T.
void BM_MatmulSquareBT(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Generator gen(0);
  const Tensor a = Tensor::randn({n, n}, gen), b = Tensor::randn({n, n}, gen);
  const Tensor bt = b.t();
  for (auto _ : state) {
    Tensor c = cppgrad::matmul(a, bt);
    benchmark::DoNotOptimize(c.data<float>());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_MatmulSquareBT)->Arg(64)->Arg(128)->Arg(256)->Arg(512)->UseRealTime();

// a^T: a transposed view of a contiguous (N, N)  g: (N, N) -> (N, N). The path of db = a^T @ g.
void BM_MatmulSquareAT(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Generator gen(0);
  const Tensor a = Tensor::randn({n, n}, gen), g = Tensor::randn({n, n}, gen);
  const Tensor at = a.t();
  for (auto _ : state) {
    Tensor c = cppgrad::matmul(at, g);
    benchmark::DoNotOptimize(c.data<float>());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_MatmulSquareAT)->Arg(64)->Arg(128)->Arg(256)->Arg(512)->UseRealTime();

// One model-shaped product. `a` and `b` are built by the caller (possibly as transposed views);
// flops = 2 * batch * M * N * K.
void run_matmul(benchmark::State& state, const Tensor& a, const Tensor& b, double flops) {
  for (auto _ : state) {
    Tensor c = cppgrad::matmul(a, b);
    benchmark::DoNotOptimize(c.data<float>());
    benchmark::ClobberMemory();
  }
  set_flops(state, flops);
}

// The model: batch 64 x 8 tokens (512 rows), d_model 32, d_ff 64, 4 heads of 8.
// For each 2-D product x: (M, K) @ w: (K, N) it registers the forward and both backward products:
//   BM_MatmulModel/MxK@KxN      out = x @ w
//   BM_MatmulModel/MxN@KxN.T    dx = g @ w^T  (w^T a transposed view of the contiguous w)
//   BM_MatmulModel/MxK.T@MxN    dw = x^T @ g  (x^T a transposed view of the contiguous x)
void register_model_2d(std::int64_t M, std::int64_t K, std::int64_t N) {
  const std::string mk = std::to_string(M) + "x" + std::to_string(K);
  const std::string kn = std::to_string(K) + "x" + std::to_string(N);
  const std::string mn = std::to_string(M) + "x" + std::to_string(N);
  const double flops = 2.0 * M * N * K;
  benchmark::RegisterBenchmark(("BM_MatmulModel/" + mk + "@" + kn).c_str(), [=](benchmark::State& state) {
    Generator gen(0);
    run_matmul(state, Tensor::randn({M, K}, gen), Tensor::randn({K, N}, gen), flops);
  })->UseRealTime();
  benchmark::RegisterBenchmark(("BM_MatmulModel/" + mn + "@" + kn + ".T").c_str(), [=](benchmark::State& state) {
    Generator gen(0);
    const Tensor g = Tensor::randn({M, N}, gen), w = Tensor::randn({K, N}, gen);
    run_matmul(state, g, w.t(), flops);
  })->UseRealTime();
  benchmark::RegisterBenchmark(("BM_MatmulModel/" + mk + ".T@" + mn).c_str(), [=](benchmark::State& state) {
    Generator gen(0);
    const Tensor x = Tensor::randn({M, K}, gen), g = Tensor::randn({M, N}, gen);
    run_matmul(state, x.t(), g, flops);
  })->UseRealTime();
}

// Attention: q: (B*H, L, Dh) @ k^T: (B*H, Dh, L) and p: (B*H, L, L) @ v: (B*H, L, Dh); with L = Dh = 8 both
// are (256, 8, 8) @ (256, 8, 8). The .T variant multiplies by a transposed view, as q @ k.transpose(-2, -1).
void register_model_batched(std::int64_t batch, std::int64_t L) {
  const std::string s = std::to_string(batch) + "x" + std::to_string(L) + "x" + std::to_string(L);
  const double flops = 2.0 * batch * L * L * L;
  benchmark::RegisterBenchmark(("BM_MatmulModel/" + s + "@" + s).c_str(), [=](benchmark::State& state) {
    Generator gen(0);
    run_matmul(state, Tensor::randn({batch, L, L}, gen), Tensor::randn({batch, L, L}, gen), flops);
  })->UseRealTime();
  benchmark::RegisterBenchmark(("BM_MatmulModel/" + s + "@" + s + ".T").c_str(), [=](benchmark::State& state) {
    Generator gen(0);
    const Tensor q = Tensor::randn({batch, L, L}, gen), k = Tensor::randn({batch, L, L}, gen);
    run_matmul(state, q, k.transpose(-2, -1), flops);
  })->UseRealTime();
}

[[maybe_unused]] const bool model_benchmarks_registered = [] {
  register_model_2d(512, 32, 32);  // attention projections
  register_model_2d(512, 32, 64);  // FFN up
  register_model_2d(512, 64, 32);  // FFN down
  register_model_batched(256, 8);  // QK^T and PV
  // The scaling rows of the speed issue: d_model 512 (512 rows, d_ff 1024) and the large model (64 x 64 = 4096
  // rows, d_model 256, d_ff 1024).
  register_model_2d(512, 512, 512);
  register_model_2d(512, 512, 1024);
  register_model_2d(512, 1024, 512);
  register_model_2d(4096, 256, 256);
  register_model_2d(4096, 256, 1024);
  register_model_2d(4096, 1024, 256);
  // The GPT benchmarks' (bench_gpt.cpp) projections: large, 1024 rows (c_attn, c_proj, mlp.c_fc, mlp.c_proj);
  // words, 768 rows (mlp.c_fc).
  register_model_2d(1024, 256, 768);
  register_model_2d(1024, 256, 256);
  register_model_2d(1024, 256, 1024);
  register_model_2d(1024, 1024, 256);
  register_model_2d(768, 64, 256);
  // GPT-2 124M at batch 4, context 64, one of 2 shards: 128 rows (c_attn, c_proj, mlp.c_fc, mlp.c_proj, and the
  // head, x @ wte^T: here with a [768, 50257] weight, the .T variant reads a [50257, 768] one as the model does).
  register_model_2d(128, 768, 2304);
  register_model_2d(128, 768, 768);
  register_model_2d(128, 768, 3072);
  register_model_2d(128, 3072, 768);
  register_model_2d(128, 768, 50257);
  return true;
}();

}  // namespace
