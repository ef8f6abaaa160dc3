// The yardstick for the GEMM targets: Debian's OpenBLAS (cblas_sgemm) on the same shapes as bench_matmul.cpp,
// called directly, so nothing but the library's own work is timed. It is loaded at run time with dlopen, so the
// build does not depend on it: without libopenblas.so.0 (package libopenblas0) these benchmarks are not registered.
// OpenBLAS runs on as many threads as OpenMP would give cppgrad (OMP_NUM_THREADS), so one command compares both
// at one thread, and another at two.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/blas_libraries.h"
#include "core/generator.h"
#include "core/parallel.h"
#include "core/tensor.h"

namespace cppgrad {
namespace {

using bench::CblasSgemm;
using bench::kNoTrans;
using bench::kRowMajor;
using bench::kTrans;

void set_flops(benchmark::State& state, double flops_per_call) {
  state.counters["GFLOPS"] = benchmark::Counter(flops_per_call, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

// C[batch][M, N] = op(A)[M, K] @ op(B)[K, N], each matrix stored row-major and contiguous; a transposed operand is
// stored as its transpose (as cppgrad's .T benchmarks multiply by a transposed view of a contiguous tensor).
// A batch is one sgemm call per matrix, which is what a BLAS offers for torch.bmm-like products.
void register_sgemm(CblasSgemm sgemm, const std::string& name, std::int64_t batch, int M, int N, int K, bool trans_a,
                    bool trans_b) {
  benchmark::RegisterBenchmark(("BM_OpenBLAS/" + name).c_str(), [=](benchmark::State& state) {
    Generator gen(0);
    const Tensor a = Tensor::randn({batch, M, K}, gen), b = Tensor::randn({batch, K, N}, gen);
    std::vector<float> c(static_cast<std::size_t>(batch * M * N));
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    const int lda = trans_a ? M : K, ldb = trans_b ? K : N;
    for (auto _ : state) {
      for (std::int64_t i = 0; i < batch; ++i)
        sgemm(kRowMajor, trans_a ? kTrans : kNoTrans, trans_b ? kTrans : kNoTrans, M, N, K, 1.0f, pa + i * M * K, lda,
              pb + i * K * N, ldb, 0.0f, c.data() + i * M * N, N);
      benchmark::DoNotOptimize(c.data());
      benchmark::ClobberMemory();
    }
    set_flops(state, 2.0 * batch * M * N * K);
    state.SetLabel(std::string("core ") + bench::openblas_core());  // "Prescott": see bench/blas_libraries.h
  })->UseRealTime();
}

[[maybe_unused]] const bool openblas_benchmarks_registered = [] {
  const CblasSgemm sgemm = bench::load_openblas_sgemm(cppgrad::max_parallel_workers());
  if (sgemm == nullptr) return false;
  for (int n : {64, 128, 256, 512, 1024}) register_sgemm(sgemm, "square/" + std::to_string(n), 1, n, n, n, false, false);
  // The names match BM_MatmulModel's: MxK@KxN (forward), MxN@KxN.T (dx = g @ w^T), MxK.T@MxN (dw = x^T @ g).
  for (auto [M, K, N] : {std::array<int, 3>{512, 32, 32}, {512, 32, 64}, {512, 64, 32}}) {
    const std::string mk = std::to_string(M) + "x" + std::to_string(K), kn = std::to_string(K) + "x" + std::to_string(N),
                      mn = std::to_string(M) + "x" + std::to_string(N);
    register_sgemm(sgemm, mk + "@" + kn, 1, M, N, K, false, false);
    register_sgemm(sgemm, mn + "@" + kn + ".T", 1, M, K, N, false, true);
    register_sgemm(sgemm, mk + ".T@" + mn, 1, K, N, M, true, false);
  }
  register_sgemm(sgemm, "256x8x8@256x8x8", 256, 8, 8, 8, false, false);
  register_sgemm(sgemm, "256x8x8@256x8x8.T", 256, 8, 8, 8, false, true);
  return true;
}();

}  // namespace
}  // namespace cppgrad
