// The bfloat16 GEMM against the float32 one at GPT-2 124M's shapes (n_embd 768, batch x context = 256 rows, and 2048
// for 8 x 256): each layer's four products forward (x @ W^T), and the two products of its backward for one of them
// (dx = g @ W, dW = g^T @ x). Kernels called directly, one thread unless --threads: what the kernel does alone.
// GFLOPS = 2*M*N*K per call.
//   build/bin/cppgrad-bench --benchmark_filter=Gemm124M
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/generator.h"
#include "core/kernels/gemm.h"
#include "core/kernels/gemm_bf16.h"
#include "core/tensor.h"

namespace {

using cppgrad::kernels::Bf16Kernel;
using cppgrad::kernels::MatrixRef;

enum Path { kFloat32 = 0, kBf16Portable = 1, kBf16Avx512Bf16 = 2, kBf16Avx512Fma = 3 };

// state.range: rows, out, in, path, which product (0: y = x W^T, 1: dx = g W, 2: dW = g^T x).
void BM_Gemm124M(benchmark::State& state) {
  const std::int64_t rows = state.range(0), out = state.range(1), in = state.range(2);
  const auto path = static_cast<Path>(state.range(3));
  const std::int64_t which = state.range(4);
  if (path == kBf16Avx512Bf16 && !cppgrad::kernels::cpu_has_avx512_bf16()) return state.SkipWithError("no AVX512_BF16");
  if (path == kBf16Avx512Fma && !cppgrad::kernels::cpu_has_avx512()) return state.SkipWithError("no AVX-512");
  cppgrad::Generator gen(0);
  const cppgrad::Tensor x = cppgrad::Tensor::randn({rows, in}, gen), w = cppgrad::Tensor::randn({out, in}, gen),
                        g = cppgrad::Tensor::randn({rows, out}, gen);
  const float *xp = x.data<float>(), *wp = w.data<float>(), *gp = g.data<float>();
  // M, N, K and the operands of each product, as linear's kernel passes them.
  std::int64_t M = rows, N = out, K = in;
  MatrixRef<float> A{xp, in, 1}, B{wp, 1, in};                       // x @ W^T
  if (which == 1) M = rows, N = in, K = out, A = {gp, out, 1}, B = {wp, in, 1};  // g @ W
  if (which == 2) M = out, N = in, K = rows, A = {gp, 1, out}, B = {xp, in, 1};  // g^T @ x
  std::vector<float> c(static_cast<std::size_t>(M * N));
  for (auto _ : state) {
    if (path == kFloat32)
      cppgrad::kernels::gemm_at_level(cppgrad::kernels::simd_level(), M, N, K, A, B, c.data());
    else
      cppgrad::kernels::gemm_bf16(path == kBf16Avx512Bf16  ? Bf16Kernel::Avx512Bf16
                                  : path == kBf16Avx512Fma ? Bf16Kernel::Avx512
                                                           : Bf16Kernel::Portable,
                                  M, N, K, A, B, c.data(), N, false);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * M * N * K, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

void Shapes124M(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "out", "in", "path", "which"});
  for (std::int64_t rows : {256, 2048})
    for (int path : {kFloat32, kBf16Portable, kBf16Avx512Bf16, kBf16Avx512Fma}) {
      for (auto [out, in] : {std::pair{2304, 768}, {768, 768}, {3072, 768}, {768, 3072}})
        b->Args({rows, out, in, path, 0});
      b->Args({rows, 3072, 768, path, 1});
      b->Args({rows, 3072, 768, path, 2});
    }
}
BENCHMARK(BM_Gemm124M)->Apply(Shapes124M)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
