#include "nn/sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace cppgrad::nn {

void check_sampling(const SamplingConfig& c) {
  if (!(std::isfinite(c.temperature) && c.temperature >= 0))
    throw std::invalid_argument(
        fmt::format("--temperature must be >= 0 and finite (0 is greedy), got {}", c.temperature));
  if (c.top_k < 0) throw std::invalid_argument(fmt::format("--top-k must be >= 0 (0 turns it off), got {}", c.top_k));
  if (!(c.top_p > 0 && c.top_p <= 1))
    throw std::invalid_argument(fmt::format("--top-p must be in (0, 1] (1 turns it off), got {}", c.top_p));
}

namespace {

// probs: [V] non-negative and finite, not all zero -> their sum
double checked_sum(const std::vector<double>& probs, const char* who) {
  if (probs.empty()) throw std::invalid_argument(fmt::format("{}: no probabilities (a vocabulary of 0)", who));
  double sum = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    if (!(std::isfinite(probs[i]) && probs[i] >= 0))
      throw std::invalid_argument(
          fmt::format("{}: probability {} of token {} is not a finite value >= 0", who, probs[i], i));
    sum += probs[i];
  }
  if (sum <= 0) throw std::invalid_argument(fmt::format("{}: the {} probabilities are all 0", who, probs.size()));
  return sum;
}

std::vector<double> normalised(std::vector<double> probs, double sum) {
  for (double& p : probs) p /= sum;
  return probs;
}

// Token ids by probability descending, the lower id first among equals.
std::vector<std::size_t> likeliest_first(const std::vector<double>& probs) {
  std::vector<std::size_t> ids(probs.size());
  std::iota(ids.begin(), ids.end(), std::size_t{0});
  std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) { return probs[a] > probs[b]; });
  return ids;
}

// probs with every token but the first `keep` of `order` set to 0, renormalised.
std::vector<double> keep_first(const std::vector<double>& probs, const std::vector<std::size_t>& order,
                               std::size_t keep) {
  std::vector<double> out(probs.size(), 0.0);
  double sum = 0;
  for (std::size_t i = 0; i < keep; ++i) out[order[i]] = probs[order[i]], sum += probs[order[i]];
  return normalised(std::move(out), sum);
}

}  // namespace

std::vector<double> top_k_filter(const std::vector<double>& probs, std::int64_t k) {
  const double sum = checked_sum(probs, "top_k_filter");
  if (k < 0) throw std::invalid_argument(fmt::format("top_k_filter: k must be >= 0 (0 turns it off), got {}", k));
  if (k == 0 || static_cast<std::size_t>(k) >= probs.size()) return normalised(probs, sum);
  return keep_first(probs, likeliest_first(probs), static_cast<std::size_t>(k));
}

// The fewest likeliest tokens whose probabilities add up to at least p (Holtzman et al. 2019's nucleus); the
// likeliest token always stays, however small p.
std::vector<double> top_p_filter(const std::vector<double>& probs, double p) {
  const double sum = checked_sum(probs, "top_p_filter");
  if (!(p > 0 && p <= 1)) throw std::invalid_argument(fmt::format("top_p_filter: p must be in (0, 1], got {}", p));
  if (p == 1) return normalised(probs, sum);
  const std::vector<std::size_t> order = likeliest_first(probs);
  const double target = p * sum;
  std::size_t keep = 0;
  for (double reached = 0; keep < order.size() && reached < target; ++keep) reached += probs[order[keep]];
  return keep_first(probs, order, keep);
}

std::vector<double> next_token_probs(const std::vector<double>& logits, const SamplingConfig& config) {
  check_sampling(config);
  if (logits.empty()) throw std::invalid_argument("next_token_probs: no logits (a vocabulary of 0)");
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (!std::isfinite(logits[i]))
      throw std::invalid_argument(fmt::format("next_token_probs: the logit of token {} is {}", i, logits[i]));
  const auto best = static_cast<std::size_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  std::vector<double> probs(logits.size(), 0.0);
  if (config.temperature == 0) {  // greedy: max_element finds the first maximum, the lowest id among ties
    probs[best] = 1;
    return probs;
  }
  // softmax(logits / T), shifted by the maximum: every exponent <= 0, so nothing overflows however small T is
  double sum = 0;
  for (std::size_t i = 0; i < logits.size(); ++i)
    sum += probs[i] = std::exp((logits[i] - logits[best]) / config.temperature);
  return top_p_filter(top_k_filter(normalised(std::move(probs), sum), config.top_k), config.top_p);
}

std::int64_t sample_token(const std::vector<double>& probs, Generator& gen) {
  const double sum = checked_sum(probs, "sample_token");
  const double target = gen.uniform() * sum;
  double reached = 0;
  std::size_t last = 0;  // the last token of positive probability: the answer if rounding leaves target unreached
  for (std::size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0) continue;
    reached += probs[i], last = i;
    if (reached > target) return static_cast<std::int64_t>(i);
  }
  return static_cast<std::int64_t>(last);
}

std::vector<TokenChoice> top_choices(const std::vector<double>& probs, std::size_t n) {
  std::vector<TokenChoice> all(probs.size());
  for (std::size_t i = 0; i < probs.size(); ++i) all[i] = {static_cast<std::int64_t>(i), probs[i]};
  n = std::min(n, all.size());
  auto likelier = [](const TokenChoice& a, const TokenChoice& b) {
    return a.prob > b.prob || (a.prob == b.prob && a.id < b.id);
  };
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), likelier);
  all.resize(n);
  return all;
}

}  // namespace cppgrad::nn
