// The machine's float32 FMA peak, the denominator of model FLOPs utilisation (bench/gpt/compare.sh): each thread runs
// 12 independent chains of acc = acc * m + c, one vector FMA each per loop turn, so the FMA units never wait on a
// result (latency 4-5 cycles x 2 units needs at least 10 chains in flight) and nothing but FMAs is timed: no loads,
// no stores. Each turn is 12 FMAs x lanes x 2 FLOPs. m and c keep every lane near 1 (the fixed point c / (1 - m)),
// so no value overflows or turns denormal.
//
// Every vector width the CPU has is measured (AVX-512: 16 lanes, AVX2 + FMA: 8), chosen at run time, so one binary
// built without -march flags reports both; the widest is the machine's peak. The best of 300 short runs is reported:
// a peak, not a typical rate, and on a busy machine some run still has its cores to itself for its few
// milliseconds (with two threads, both cores at once: rarer, so a busy machine's 2-thread figure is low).
//   cc -O2 -fopenmp bench/gpt/fma_peak.c -o fma_peak && ./fma_peak 1 2
// prints one line per width and thread count: "avx512 threads 2: 123.4 GFLOP/s (61.7 per thread)", and where the CPU
// has AVX512_BF16 a bfloat16 line after them: "avx512_bf16 threads 2: ...".
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { kChains = 12, kRuns = 300 };
static const long kTurns = 500 * 1000;  // ~1-3 ms per run at 2-4 GHz: shorter than a time slice

// Both kernels: 12 named accumulators (not an array, so each stays in a register), each from its own start (equal
// chains would be merged into one by the compiler), the sum returned so the compiler cannot drop the loop.
#define CHAIN_STEP(FMA) \
  a0 = FMA(a0, m, c); a1 = FMA(a1, m, c); a2 = FMA(a2, m, c); a3 = FMA(a3, m, c); a4 = FMA(a4, m, c);       \
  a5 = FMA(a5, m, c); a6 = FMA(a6, m, c); a7 = FMA(a7, m, c); a8 = FMA(a8, m, c); a9 = FMA(a9, m, c);       \
  a10 = FMA(a10, m, c); a11 = FMA(a11, m, c);

__attribute__((target("avx512f"))) static float chains_avx512(long turns, float seed) {
  const __m512 m = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(0.001f);
  __m512 a0 = _mm512_set1_ps(seed), a1 = _mm512_set1_ps(seed + 0.01f), a2 = _mm512_set1_ps(seed + 0.02f),
         a3 = _mm512_set1_ps(seed + 0.03f), a4 = _mm512_set1_ps(seed + 0.04f), a5 = _mm512_set1_ps(seed + 0.05f),
         a6 = _mm512_set1_ps(seed + 0.06f), a7 = _mm512_set1_ps(seed + 0.07f), a8 = _mm512_set1_ps(seed + 0.08f),
         a9 = _mm512_set1_ps(seed + 0.09f), a10 = _mm512_set1_ps(seed + 0.10f), a11 = _mm512_set1_ps(seed + 0.11f);
  for (long i = 0; i < turns; ++i) { CHAIN_STEP(_mm512_fmadd_ps) }
  const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                 _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)),
                                               _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11))));
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float chains_avx2(long turns, float seed) {
  const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  __m256 a0 = _mm256_set1_ps(seed), a1 = _mm256_set1_ps(seed + 0.01f), a2 = _mm256_set1_ps(seed + 0.02f),
         a3 = _mm256_set1_ps(seed + 0.03f), a4 = _mm256_set1_ps(seed + 0.04f), a5 = _mm256_set1_ps(seed + 0.05f),
         a6 = _mm256_set1_ps(seed + 0.06f), a7 = _mm256_set1_ps(seed + 0.07f), a8 = _mm256_set1_ps(seed + 0.08f),
         a9 = _mm256_set1_ps(seed + 0.09f), a10 = _mm256_set1_ps(seed + 0.10f), a11 = _mm256_set1_ps(seed + 0.11f);
  for (long i = 0; i < turns; ++i) { CHAIN_STEP(_mm256_fmadd_ps) }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                 _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)),
                                               _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11))));
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

// The bfloat16 peak, where the CPU has AVX512_BF16 (the denominator of a bf16 run's MFU): the same 12 chains of
// vdpbf16ps, each adding two bfloat16 products to each of 16 float lanes: 32 multiply-adds, 64 FLOPs an instruction.
// acc += 1 * 2^-20 + 1 * 2^-20 a turn keeps every lane far from overflow over the run.
#define DPBF16(a, m, c) _mm512_dpbf16_ps(a, m, c)
__attribute__((target("avx512f,avx512bf16"))) static float chains_avx512_bf16(long turns, float seed) {
  const __m512bh m = (__m512bh)_mm512_set1_epi16(0x3F80), c = (__m512bh)_mm512_set1_epi16(0x3580);  // 1, 2^-20
  __m512 a0 = _mm512_set1_ps(seed), a1 = _mm512_set1_ps(seed + 0.01f), a2 = _mm512_set1_ps(seed + 0.02f),
         a3 = _mm512_set1_ps(seed + 0.03f), a4 = _mm512_set1_ps(seed + 0.04f), a5 = _mm512_set1_ps(seed + 0.05f),
         a6 = _mm512_set1_ps(seed + 0.06f), a7 = _mm512_set1_ps(seed + 0.07f), a8 = _mm512_set1_ps(seed + 0.08f),
         a9 = _mm512_set1_ps(seed + 0.09f), a10 = _mm512_set1_ps(seed + 0.10f), a11 = _mm512_set1_ps(seed + 0.11f);
  for (long i = 0; i < turns; ++i) { CHAIN_STEP(DPBF16) }
  const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                 _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)),
                                               _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11))));
  return _mm512_reduce_add_ps(s);
}

typedef float (*Kernel)(long, float);

// threads threads each run kernel for kTurns turns, started together -> the best GFLOP/s of kRuns runs, all threads
static double peak(Kernel kernel, int lanes, int threads) {
  double best = 0, sink = 0;
  for (int run = 0; run < kRuns; ++run) {
    double start = 0, end = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
#pragma omp barrier
#pragma omp single
      start = omp_get_wtime();
      sink += kernel(kTurns, 1.0f + (float)omp_get_thread_num());
#pragma omp barrier
#pragma omp single
      end = omp_get_wtime();
    }
    const double flops = (double)threads * kTurns * kChains * lanes * 2.0;
    if (flops / (end - start) > best) best = flops / (end - start);
  }
  if (sink == 0) printf("(sink %g)\n", sink);  // never true: keeps the results live
  return best / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s THREADS...   e.g. %s 1 2\n", argv[0], argv[0]);
    return 2;
  }
  __builtin_cpu_init();
  const int has_avx512_bf16 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
  const int has_avx512 = __builtin_cpu_supports("avx512f"), has_avx2 = __builtin_cpu_supports("avx2") &&
                                                                         __builtin_cpu_supports("fma");
  if (!has_avx2) {
    fprintf(stderr, "fma_peak: this CPU has no AVX2 + FMA: nothing to measure\n");
    return 1;
  }
  for (int i = 1; i < argc; ++i) {
    const int threads = atoi(argv[i]);
    if (threads < 1) {
      fprintf(stderr, "fma_peak: a thread count must be >= 1, got '%s'\n", argv[i]);
      return 2;
    }
    if (has_avx512) {
      const double g = peak(chains_avx512, 16, threads);
      printf("avx512 threads %d: %.1f GFLOP/s (%.1f per thread)\n", threads, g, g / threads);
    }
    const double g = peak(chains_avx2, 8, threads);
    printf("avx2 threads %d: %.1f GFLOP/s (%.1f per thread)\n", threads, g, g / threads);
    if (has_avx512_bf16) {  // after the float lines: the widest float line stays the first of each thread count
      const double b = peak(chains_avx512_bf16, 32, threads);
      printf("avx512_bf16 threads %d: %.1f GFLOP/s (%.1f per thread)\n", threads, b, b / threads);
    }
  }
  return 0;
}
