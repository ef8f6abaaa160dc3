#pragma once
// Choosing the next token from a language model's logits: temperature, top-k and top-p (nucleus) filtering, and one
// draw from what is left. The order is Hugging Face's (temperature, then top-k, then top-p, each on the previous
// one's renormalised distribution); nanoGPT's generate() has the first two.
//
//   probs = softmax(logits / T)                      T = 0: all mass on the argmax (greedy)
//   probs = the k largest, renormalised              k = 0: off
//   probs = the fewest largest reaching p, renorm.   p = 1: off
//   token = inverse CDF of probs at one uniform draw
//
// Ties are broken by the lower token id everywhere, so every result is a function of the logits alone, where
// PyTorch's differ:
//  - top-k: nanoGPT (`v, _ = torch.topk(logits, k); logits[logits < v[-1]] = -inf`) and Hugging Face's
//    TopKLogitsWarper keep every token tied with the k-th value, so more than k can survive; here exactly k do,
//    the lower ids among the tied.
//  - top-p: Hugging Face's TopPLogitsWarper sorts ascending and drops the tokens whose cumulative probability is
//    <= 1 - p: the same set as here (the fewest largest whose sum is >= p, a sum of exactly p included) except at
//    ties, which torch.sort orders arbitrarily (here: lower ids first), and at sums within rounding of p (it sums in
//    float32 from the smallest, here in double from the largest).
#include <cstdint>
#include <vector>

#include "core/generator.h"

namespace cppgrad::nn {

struct SamplingConfig {
  double temperature = 1.0;  // >= 0; 0 is greedy
  std::int64_t top_k = 0;    // >= 0; 0 is off
  double top_p = 1.0;        // in (0, 1]; 1 is off
};

// Throws std::invalid_argument naming the command-line flag: --temperature must be >= 0 and finite, --top-k >= 0,
// --top-p in (0, 1].
void check_sampling(const SamplingConfig& config);

// logits: [V], finite -> the distribution the next token is drawn from, [V], summing to 1 (zeros where filtered).
std::vector<double> next_token_probs(const std::vector<double>& logits, const SamplingConfig& config);

// The filters on their own (next_token_probs composes them). probs: [V], non-negative -> [V], renormalised.
// top_k_filter: the k largest (ties: the lower ids), k = 0 or k >= V keeps all. top_p_filter: the fewest largest
// whose sum reaches p * sum(probs), p = 1 keeps all.
std::vector<double> top_k_filter(const std::vector<double>& probs, std::int64_t k);
std::vector<double> top_p_filter(const std::vector<double>& probs, double p);

// One uniform draw u from gen, then the first token whose cumulative probability exceeds u * sum(probs) (inverse
// CDF), so a token of probability 0 is never chosen. probs: [V], non-negative, not all 0.
std::int64_t sample_token(const std::vector<double>& probs, Generator& gen);

struct TokenChoice {
  std::int64_t id;
  double prob;
};
// The n likeliest tokens (fewer if V < n), by probability descending, then id ascending.
std::vector<TokenChoice> top_choices(const std::vector<double>& probs, std::size_t n);

}  // namespace cppgrad::nn
