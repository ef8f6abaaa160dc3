// The BPE tokenizer's regex split (data/text_split.h) over a text file, GPT-2's and GPT-4's patterns, the best of
// REPEATS runs each: the same program built natively (PCRE2, JIT) and for WebAssembly (JavaScript's regex under
// node, data/text_split_js.cpp), so the two can be compared on one machine (docs/browser.md). It also prints a
// digest of the pieces (their count and an FNV-1a hash of their lengths in order): equal digests mean the same split.
//   bible -f gen1:1-rev22:21 > kjv.txt
//   cmake --build --preset wasm --target split_speed && node --no-experimental-fetch build-wasm/bin/split_speed.js kjv.txt 5
// Usage: split_speed FILE [REPEATS, default 5]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "data/bpe.h"
#include "data/utf8.h"
#include "data/text_split.h"

int main(int argc, char** argv) {
  using namespace cppgrad;
  if (argc < 2) {
    std::fprintf(stderr, "usage: split_speed FILE [REPEATS]\n");
    return 2;
  }
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  if (repeats <= 0) {
    std::fprintf(stderr, "split_speed: REPEATS must be a positive whole number, got '%s'\n", argv[2]);
    return 2;
  }
  try {
    const std::string text = data::read_text_file(argv[1]);
    for (const auto& [name, pattern] : {std::pair{"gpt2", data::kGpt2SplitPattern},
                                        std::pair{"gpt4", data::kGpt4SplitPattern}}) {
      const data::TextSplitter split(pattern);
      double best = 1e30;
      std::uint64_t pieces = 0, hash = 0;
      for (int r = 0; r < repeats; ++r) {
        pieces = 0;
        hash = 1469598103934665603ull;  // FNV-1a over the pieces' lengths
        const auto start = std::chrono::steady_clock::now();
        split.for_each_piece(text, [&](std::string_view piece) {
          ++pieces;
          hash = (hash ^ piece.size()) * 1099511628211ull;
        });
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::printf("%s: %zu bytes, %llu pieces, digest %016llx, best of %d: %.3f s, %.1f MB/s\n", name, text.size(),
                  static_cast<unsigned long long>(pieces), static_cast<unsigned long long>(hash), repeats, best,
                  static_cast<double>(text.size()) / best / 1e6);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "split_speed: %s\n", e.what());
    return 1;
  }
}
