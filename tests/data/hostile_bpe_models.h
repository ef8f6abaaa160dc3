#pragma once
// The shapes of .model file that once cost a reader memory or time out of all proportion to their size, made small or
// full-size for the tests (tests/data/test_bpe.cpp, tests/cli/test_gpt_tokenize_cli.cpp) and the fuzzer's seeds
// (fuzz/make_corpus.sh writes the same shapes).
#include <cstdint>
#include <string>

namespace cppgrad::test {

inline std::string model_header(std::int64_t specials = 0) {
  return "minbpe v1\n\\p{L}+|\\s+|.\n" + std::to_string(specials) + "\n";
}

// Each merge joins the previous token with itself: token 256 + r holds 2^(r + 1) bytes (40 merges: 2^41 bytes, from
// a file of 338 bytes).
inline std::string doubling_model(int merges) {
  std::string text = model_header() + "97 97\n";
  for (int r = 1; r < merges; ++r) text += std::to_string(255 + r) + " " + std::to_string(255 + r) + "\n";
  return text;
}

// Each token one byte longer than the last: n merges make n^2 / 2 bytes in all.
inline std::string growing_model(int merges) {
  std::string text = model_header() + "97 97\n";
  for (int r = 1; r < merges; ++r) text += std::to_string(255 + r) + " 97\n";
  return text;
}

// Every token within the bound of one token's bytes, but many of them large: doubling up to a token of 1024 bytes,
// 256 tokens of 1025 bytes, then joins of two of those (2050 bytes each, up to 65,536 of them): each line of about
// 10 bytes makes 2 KB more.
inline std::string wide_model(int pairs) {
  std::string text = doubling_model(10);  // token 265: 1024 bytes
  for (int b = 0; b < 256; ++b) text += "265 " + std::to_string(b) + "\n";  // tokens 266..521
  for (int p = 0; p < pairs; ++p) text += std::to_string(266 + p / 256) + " " + std::to_string(266 + p % 256) + "\n";
  return text;
}

// n special tokens and no merges: each must be checked against the others without comparing every pair.
inline std::string many_specials_model(int n) {
  std::string text = model_header(n);
  for (int i = 0; i < n; ++i) text += "<s" + std::to_string(i) + "> " + std::to_string(256 + i) + "\n";
  return text;
}

}  // namespace cppgrad::test
