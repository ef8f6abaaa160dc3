// Sampling from a GPT (nn/generate.h), time per generated token: one sample is context - 1 new tokens after a
// 1-token prompt (temperature 1, no filters, no stop token, so every sample has the same length), on an untrained
// float32 nn::GPT at the shapes of issue 25's speed table (BM_GptStep's). Its target: the KV cache at least 10x
// llm.c's full recompute per token, which bench/gpt/compare.sh measures beside these (bench/gpt/llmc_sample.c).
//
//   BM_GptSample           nn::generate: the prompt's forward, then one position's forward per token, reading the
//                          keys and values cached so far
//   BM_GptSampleRecompute  nn::generate_recompute: GPT::forward on the whole prefix for every token (nanoGPT's
//                          generate), the reference the cache is held equal to
//
// The time column is one sample's wall time; the counter `tokens` is tokens per second (ms per token: 1000 / it).
#include <benchmark/benchmark.h>

#include <omp.h>

#include <cstdint>
#include <vector>

#include "core/generator.h"
#include "nn/generate.h"
#include "nn/gpt.h"

namespace {

using namespace cppgrad;

struct SampleShape {
  std::int64_t vocab, d, layers, heads, context;
};

using GenerateFn = std::vector<std::int64_t> (*)(const nn::GPT&, const std::vector<std::int64_t>&,
                                                 const nn::GenerateOptions&, Generator&, const nn::StepCallback&);

// Arg: the thread count (OpenMP's setting, restored afterwards).
void sample_per_token(benchmark::State& state, const SampleShape& s, GenerateFn generate_fn) {
  const int threads = static_cast<int>(state.range(0)), previous = omp_get_max_threads();
  omp_set_num_threads(threads);
  {
    Generator init(0);
    const nn::GPT model(nn::GPTConfig{.block_size = s.context, .vocab_size = s.vocab, .n_layer = s.layers,
                                      .n_head = s.heads, .n_embd = s.d},
                        init);
    const std::vector<std::int64_t> prompt{0};
    const nn::GenerateOptions options{.max_new_tokens = s.context - 1, .sampling = {.temperature = 1.0}};
    Generator draws(1);
    benchmark::DoNotOptimize(generate_fn(model, prompt, options, draws, nullptr));  // warm-up
    for (auto _ : state) {
      const std::vector<std::int64_t> out = generate_fn(model, prompt, options, draws, nullptr);
      if (static_cast<std::int64_t>(out.size()) != options.max_new_tokens) state.SkipWithError("short sample");
      benchmark::DoNotOptimize(out.data());
    }
    state.counters["tokens"] = benchmark::Counter(static_cast<double>(options.max_new_tokens),
                                                  benchmark::Counter::kIsIterationInvariantRate);  // per second
  }
  omp_set_num_threads(previous);
}

void BM_GptSample(benchmark::State& state, SampleShape shape) { sample_per_token(state, shape, nn::generate); }
void BM_GptSampleRecompute(benchmark::State& state, SampleShape shape) {
  sample_per_token(state, shape, nn::generate_recompute);
}

// The words anchor: vocab 70, d 64, 4 layers, 4 heads, context 24 (23 tokens a sample).
BENCHMARK_CAPTURE(BM_GptSample, words, SampleShape{70, 64, 4, 4, 24})
    ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GptSampleRecompute, words, SampleShape{70, 64, 4, 4, 24})
    ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
// The large configuration: vocab 64, d 256, 4 layers, 4 heads, context 128 (127 tokens a sample).
BENCHMARK_CAPTURE(BM_GptSample, large, SampleShape{64, 256, 4, 4, 128})
    ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GptSampleRecompute, large, SampleShape{64, 256, 4, 4, 128})
    ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// GPT-2 124M (vocab 50257, d 768, 12 layers, 12 heads) at llm.c's sampling length: context 64, 63 tokens a sample
// (train_gpt2.c's genT). Only the KV cache: the recompute twin would take minutes here (bench/gpt/gpt2_124m.sh).
BENCHMARK_CAPTURE(BM_GptSample, gpt2, SampleShape{50257, 768, 12, 12, 64})
    ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
