// softmax and layer_norm, forward only and forward+backward, at the reversal transformer's shapes and at a
// larger one. Wall-clock time (UseRealTime) throughout, as the row loops use OpenMP above 32k elements.
// items_per_second counts input elements. This file also holds the benchmark main; bench_matmul.cpp has matmul.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "core/autograd.h"
#include "core/generator.h"
#include "core/ops/attention.h"
#include "core/ops/layer_norm.h"
#include "core/ops/softmax.h"
#include "core/tensor.h"
#include "nn/attention.h"

namespace {

using cppgrad::Generator;
using cppgrad::Shape;
using cppgrad::Tensor;

const Shape kAttention = {64, 4, 8, 8};  // (B, H, L, L) attention scores, softmax over the last dim
const Shape kWide = {512, 1000};         // (N, C) a classifier-sized row

// x: (..) -> softmax over the last dim. Forward only: x needs no grad, so no graph is recorded.
void BM_Softmax(benchmark::State& state, Shape shape) {
  Generator gen(0);
  const Tensor x = Tensor::randn(shape, gen);
  for (auto _ : state) {
    Tensor y = cppgrad::softmax(x, -1);
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK_CAPTURE(BM_Softmax, 64x4x8x8, kAttention)->UseRealTime();
BENCHMARK_CAPTURE(BM_Softmax, 512x1000, kWide)->UseRealTime();

// Forward, then backward from a random upstream gradient into the leaf x (its grad dropped each iteration).
void BM_SoftmaxFwdBwd(benchmark::State& state, Shape shape) {
  Generator gen(0);
  Tensor x = Tensor::randn(shape, gen);
  x.set_requires_grad(true);
  const Tensor upstream = Tensor::randn(shape, gen);
  for (auto _ : state) {
    x.zero_grad();
    Tensor y = cppgrad::softmax(x, -1);
    y.backward(upstream);
    benchmark::DoNotOptimize(x.grad().data<float>());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK_CAPTURE(BM_SoftmaxFwdBwd, 64x4x8x8, kAttention)->UseRealTime();
BENCHMARK_CAPTURE(BM_SoftmaxFwdBwd, 512x1000, kWide)->UseRealTime();

// x: (N, D)  weight, bias: (D) -> (N, D). Forward only: nothing needs grad, so no graph is recorded.
void BM_LayerNorm(benchmark::State& state, std::int64_t N, std::int64_t D) {
  Generator gen(0);
  const Tensor x = Tensor::randn({N, D}, gen), w = Tensor::randn({D}, gen), b = Tensor::randn({D}, gen);
  for (auto _ : state) {
    Tensor y = cppgrad::layer_norm(x, w, b);
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK_CAPTURE(BM_LayerNorm, 512x32, 512, 32)->UseRealTime();
BENCHMARK_CAPTURE(BM_LayerNorm, 4096x256, 4096, 256)->UseRealTime();

// Forward, then backward from a random upstream gradient into x, weight and bias (grads dropped each iteration).
void BM_LayerNormFwdBwd(benchmark::State& state, std::int64_t N, std::int64_t D) {
  Generator gen(0);
  Tensor x = Tensor::randn({N, D}, gen), w = Tensor::randn({D}, gen), b = Tensor::randn({D}, gen);
  for (Tensor* t : {&x, &w, &b}) t->set_requires_grad(true);
  const Tensor upstream = Tensor::randn({N, D}, gen);
  for (auto _ : state) {
    for (const Tensor* t : {&x, &w, &b}) t->zero_grad();
    Tensor y = cppgrad::layer_norm(x, w, b);
    y.backward(upstream);
    benchmark::DoNotOptimize(x.grad().data<float>());
    benchmark::DoNotOptimize(w.grad().data<float>());
    benchmark::DoNotOptimize(b.grad().data<float>());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK_CAPTURE(BM_LayerNormFwdBwd, 512x32, 512, 32)->UseRealTime();
BENCHMARK_CAPTURE(BM_LayerNormFwdBwd, 4096x256, 4096, 256)->UseRealTime();

// Attention forward + backward on x [B, L, H, dh]: q = k = v = the head views [B, H, L, dh], causal mask, and the
// head merge after it, as MultiHeadAttention does; `fused`: the fused op the modules run (fused_attention), otherwise
// the composition of core ops (nn::scaled_dot_product_attention). GFLOPS counts the six products (Q K^T, P V; dO V^T,
// dS K, dS^T Q, P^T dO): 12 L^2 dh per head.
void run_attention_fwd_bwd(benchmark::State& state, std::int64_t B, std::int64_t L, std::int64_t H, std::int64_t dh,
                           bool fused) {
  Generator gen(0);
  Tensor x = Tensor::randn({B, L, H, dh}, gen);
  x.set_requires_grad(true);
  const Tensor mask = cppgrad::nn::causal_mask(L);
  const Tensor upstream = Tensor::randn({B, L, H * dh}, gen);
  for (auto _ : state) {
    x.zero_grad();
    const Tensor h = x.transpose(1, 2);  // [B, H, L, dh]
    const Tensor out = fused ? cppgrad::fused_attention(h, h, h, mask).output
                             : cppgrad::nn::scaled_dot_product_attention(h, h, h, mask).output;
    out.transpose(1, 2).reshape({B, L, H * dh}).backward(upstream);
    benchmark::DoNotOptimize(x.grad().data<float>());
  }
  state.counters["GFLOPS"] = benchmark::Counter(12.0 * B * H * L * L * dh, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

// The default model's shape: x [64, 8, 32] in 4 heads of 8. Arg 1: the fused op; 0: the composed ops.
void BM_AttentionFwdBwd(benchmark::State& state) { run_attention_fwd_bwd(state, 64, 8, 4, 8, state.range(0) != 0); }
BENCHMARK(BM_AttentionFwdBwd)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The large configuration: batch 64, 64 positions, 8 heads of 32, the fused op.
void BM_AttentionFwdBwdLarge(benchmark::State& state) { run_attention_fwd_bwd(state, 64, 64, 8, 32, true); }
BENCHMARK(BM_AttentionFwdBwdLarge)->UseRealTime()->Unit(benchmark::kMillisecond);

// The GPT benchmarks' attention (bench_gpt.cpp), the fused op: words, batch 32, 24 positions, 4 heads of 16; large,
// batch 8, 128 positions, 4 heads of 64.
void BM_AttentionFwdBwdGptWords(benchmark::State& state) { run_attention_fwd_bwd(state, 32, 24, 4, 16, true); }
BENCHMARK(BM_AttentionFwdBwdGptWords)->UseRealTime()->Unit(benchmark::kMicrosecond);
void BM_AttentionFwdBwdGptLarge(benchmark::State& state) { run_attention_fwd_bwd(state, 8, 128, 4, 64, true); }
BENCHMARK(BM_AttentionFwdBwdGptLarge)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
