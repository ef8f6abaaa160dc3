// The BPE tokenizer's speed (data/bpe.h) on a real text, one core: encoding with GPT-2's tokenizer (MB/s of text)
// and training a 4,096-token vocabulary (issue 32's targets: at least 2x npm tiktoken's MB/s; under a minute).
//
//   bible -f gen1:1-rev22:21 > kjv.txt                       # Debian's bible-kjv: the King James Bible, 4.4 MB
//   CPPGRAD_BPE_TEXT=kjv.txt build/bin/cppgrad-bench --benchmark_filter=Bpe
//
//   BM_BpeSplitGpt2     the regex split alone (PCRE2, JIT), GPT-2's pattern
//   BM_BpeEncodeGpt2    BpeTokenizer::gpt2().encode_ordinary(text): split, merge per distinct piece, cache
//   BM_BpeTrain4096     BpeTokenizer::train(text, 4096): GPT-4's split pattern, 3,840 merges
// npm tiktoken on the same file, for comparison: bench/bpe_tiktoken.cjs. Figures: docs/tokenizer.md.
// The counter bytes_per_second is the text's bytes over the wall time. Without $CPPGRAD_BPE_TEXT (or GPT-2's files
// for the GPT-2 benchmarks) each benchmark stops with a message saying what to set.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "data/bpe.h"
#include "data/utf8.h"

namespace {

using cppgrad::data::BpeTokenizer;

// The text named by $CPPGRAD_BPE_TEXT, read once; "" when unset.
const std::string& bench_text() {
  static const std::string text = [] {
    const char* path = std::getenv("CPPGRAD_BPE_TEXT");
    return path && *path ? cppgrad::data::read_text_file(path) : std::string();
  }();
  return text;
}

bool have_text(benchmark::State& state) {
  if (!bench_text().empty()) return true;
  state.SkipWithError("set CPPGRAD_BPE_TEXT to a text file (bible -f gen1:1-rev22:21 > kjv.txt)");
  return false;
}

void BM_BpeSplitGpt2(benchmark::State& state) {
  if (!have_text(state)) return;
  const cppgrad::data::TextSplitter split(cppgrad::data::kGpt2SplitPattern);
  std::size_t pieces = 0;
  for (auto _ : state) {
    pieces = 0;
    split.for_each_piece(bench_text(), [&](std::string_view) { ++pieces; });
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bench_text().size()));
  state.counters["pieces"] = static_cast<double>(pieces);
}
BENCHMARK(BM_BpeSplitGpt2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_BpeEncodeGpt2(benchmark::State& state) {
  if (!have_text(state)) return;
  std::optional<BpeTokenizer> tok;
  try {
    tok = BpeTokenizer::gpt2();
  } catch (const std::runtime_error& e) {
    state.SkipWithError(e.what());
    return;
  }
  std::size_t tokens = 0;
  for (auto _ : state) tokens = tok->encode_ordinary(bench_text()).size();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bench_text().size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_BpeEncodeGpt2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_BpeTrain4096(benchmark::State& state) {
  if (!have_text(state)) return;
  for (auto _ : state) benchmark::DoNotOptimize(BpeTokenizer::train(bench_text(), 4096).num_merges());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bench_text().size()));
}
BENCHMARK(BM_BpeTrain4096)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
