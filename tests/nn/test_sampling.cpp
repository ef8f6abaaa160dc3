// Sampling (nn/sampling.h): temperature, top-k, top-p, the draw and the ranking, with their ties and refusals.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "nn/sampling.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using namespace nn;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;

std::vector<double> softmax(const std::vector<double>& logits, double temperature = 1.0) {
  std::vector<double> p;
  double sum = 0;
  for (double l : logits) sum += p.emplace_back(std::exp(l / temperature));
  for (double& x : p) x /= sum;
  return p;
}

std::size_t count_nonzero(const std::vector<double>& p) {
  return static_cast<std::size_t>(std::count_if(p.begin(), p.end(), [](double x) { return x > 0; }));
}

TEST(Sampling, TemperatureZeroIsTheArgmaxLowestIdOnTies) {
  EXPECT_THAT(next_token_probs({1, 3, 2, 3}, {.temperature = 0}), ElementsAre(0, 1, 0, 0));
  // the filters cannot change a one-hot distribution
  EXPECT_THAT(next_token_probs({1, 3, 2, 3}, {.temperature = 0, .top_k = 1, .top_p = 0.01}), ElementsAre(0, 1, 0, 0));
  EXPECT_THAT(next_token_probs({-5}, {.temperature = 0}), ElementsAre(1));
}

TEST(Sampling, TemperatureDividesTheLogits) {
  const std::vector<double> logits = {0.5, -1.0, 2.0, 0.0};
  EXPECT_THAT(next_token_probs(logits, {}), Pointwise(DoubleNear(1e-15), softmax(logits)));
  EXPECT_THAT(next_token_probs(logits, {.temperature = 2.5}), Pointwise(DoubleNear(1e-15), softmax(logits, 2.5)));
  // a tiny temperature overflows nothing: the tied maxima share the mass
  EXPECT_THAT(next_token_probs({0, 1000, 1000}, {.temperature = 1e-300}), ElementsAre(0, 0.5, 0.5));
}

TEST(Sampling, TopKKeepsExactlyKTheLowerIdsAmongTies) {
  const std::vector<double> logits = {0.3, -1.2, 2.0, 0.9, 1.5, -0.4, 0.1, 1.1};
  const std::vector<double> p = next_token_probs(logits, {.top_k = 3});
  EXPECT_EQ(count_nonzero(p), 3u);
  const std::vector<double> full = softmax(logits);
  const double kept = full[2] + full[4] + full[7];  // the three largest logits: 2.0, 1.5, 1.1
  EXPECT_THAT(p, Pointwise(DoubleNear(1e-15), std::vector<double>{0, 0, full[2] / kept, 0, full[4] / kept, 0, 0,
                                                                  full[7] / kept}));
  // tied at the k-th value: nanoGPT's `logits[logits < v[-1]] = -inf` would keep ids 1, 2 and 3; here 1 and 2
  EXPECT_THAT(next_token_probs({1, 2, 2, 2, 0}, {.top_k = 2}), ElementsAre(0, 0.5, 0.5, 0, 0));
  EXPECT_THAT(top_k_filter({0.1, 0.2, 0.2, 0.2, 0.3}, 2),
              Pointwise(DoubleNear(1e-15), std::vector<double>{0, 0.4, 0, 0, 0.6}));
  // k >= V (or 0) keeps everything
  EXPECT_THAT(next_token_probs(logits, {.top_k = 8}), Pointwise(DoubleNear(1e-15), full));
  EXPECT_THAT(next_token_probs(logits, {.top_k = 100}), Pointwise(DoubleNear(1e-15), full));
}

TEST(Sampling, TopPKeepsTheFewestReachingPASumOfExactlyPIncluded) {
  // exact binary fractions: 0.5 + 0.25 is exactly 0.75
  EXPECT_THAT(top_p_filter({0.125, 0.5, 0.125, 0.25}, 0.75), ElementsAre(0, 2.0 / 3, 0, 1.0 / 3));
  EXPECT_THAT(top_p_filter({0.125, 0.5, 0.125, 0.25}, 0.75 + 1e-12),
              ElementsAre(0.125 / 0.875, 0.5 / 0.875, 0, 0.25 / 0.875));
  EXPECT_THAT(top_p_filter({0.125, 0.5, 0.125, 0.25}, 0.5), ElementsAre(0, 1, 0, 0));
  EXPECT_THAT(top_p_filter({0.125, 0.5, 0.125, 0.25}, 1e-9), ElementsAre(0, 1, 0, 0));  // the likeliest always stays
  // through next_token_probs: equal logits give exactly 0.25 each; p = 0.5 is reached by two (the lower ids)
  EXPECT_THAT(next_token_probs({0, 0, 0, 0}, {.top_p = 0.5}), ElementsAre(0.5, 0.5, 0, 0));
  EXPECT_EQ(count_nonzero(next_token_probs({0, 0, 0, 0}, {.top_p = 0.5 + 1e-9})), 3u);
  EXPECT_THAT(next_token_probs({0, 0, 0, 0}, {.top_p = 1}), ElementsAre(0.25, 0.25, 0.25, 0.25));
}

TEST(Sampling, TopPActsOnTheTopKDistribution) {
  // top-k 3 of {0.4, 0.3, 0.2, 0.1} renormalises to {4/9, 3/9, 2/9, 0}: p = 0.75 is reached by two tokens
  // (7/9), where on the unfiltered distribution two reach only 0.7 and it takes three
  const std::vector<double> logits = {std::log(0.4), std::log(0.3), std::log(0.2), std::log(0.1)};
  EXPECT_EQ(count_nonzero(next_token_probs(logits, {.top_k = 3, .top_p = 0.75})), 2u);
  EXPECT_EQ(count_nonzero(next_token_probs(logits, {.top_p = 0.75})), 3u);
  EXPECT_THAT(next_token_probs(logits, {.temperature = 0.7, .top_k = 3, .top_p = 0.9}),
              Pointwise(DoubleNear(1e-15), top_p_filter(top_k_filter(softmax(logits, 0.7), 3), 0.9)));
}

TEST(Sampling, RefusesOutOfRangeSettingsNamingTheFlag) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW_MSG(check_sampling({.temperature = -0.1}), std::invalid_argument,
                   "--temperature must be >= 0 and finite");
  EXPECT_THROW_MSG(check_sampling({.temperature = nan}), std::invalid_argument, "--temperature");
  EXPECT_THROW_MSG(check_sampling({.temperature = inf}), std::invalid_argument, "--temperature");
  EXPECT_THROW_MSG(check_sampling({.top_k = -1}), std::invalid_argument,
                   "--top-k must be >= 0 (0 turns it off), got -1");
  EXPECT_THROW_MSG(check_sampling({.top_p = 0}), std::invalid_argument, "--top-p must be in (0, 1]");
  EXPECT_THROW_MSG(check_sampling({.top_p = 1.5}), std::invalid_argument, "--top-p must be in (0, 1]");
  EXPECT_THROW_MSG(check_sampling({.top_p = nan}), std::invalid_argument, "--top-p");
  EXPECT_NO_THROW(check_sampling({.temperature = 0, .top_k = 0, .top_p = 1}));
  EXPECT_THROW_MSG(next_token_probs({0, 1}, {.top_p = 2}), std::invalid_argument, "--top-p");
  EXPECT_THROW_MSG(next_token_probs({0, nan}, {}), std::invalid_argument,
                   "next_token_probs: the logit of token 1 is nan");
  EXPECT_THROW_MSG(next_token_probs({}, {}), std::invalid_argument, "next_token_probs: no logits");
  Generator gen(0);
  EXPECT_THROW_MSG(sample_token({0, 0}, gen), std::invalid_argument, "sample_token: the 2 probabilities are all 0");
  EXPECT_THROW_MSG(sample_token({0.5, -0.1}, gen), std::invalid_argument, "sample_token: probability -0.1 of token 1");
}

// 10000 draws: each frequency is within 4 standard deviations (sqrt(p (1 - p) / n) <= 0.005) of its probability,
// a 0.02 tolerance; a sampler off by one token (the probabilities rotated) must fail the same comparison.
TEST(Sampling, SampleTokenFrequenciesMatchTheProbabilities) {
  const std::vector<double> probs = {0.1, 0.0, 0.2, 0.3, 0.4};
  Generator gen(12345);
  std::vector<double> freq(probs.size(), 0.0);
  const int n = 10000;
  for (int i = 0; i < n; ++i) freq[static_cast<std::size_t>(sample_token(probs, gen))] += 1.0 / n;
  auto max_gap = [&](const std::vector<double>& want) {
    double m = 0;
    for (std::size_t i = 0; i < want.size(); ++i) m = std::max(m, std::abs(freq[i] - want[i]));
    return m;
  };
  EXPECT_LT(max_gap(probs), 0.02);
  EXPECT_GT(max_gap({0.4, 0.1, 0.0, 0.2, 0.3}), 0.02);
  EXPECT_EQ(freq[1], 0.0);  // probability 0 is never drawn
  // one uniform draw per token: the stream after a draw is the stream after one uniform()
  Generator a(7), b(7);
  sample_token(probs, a);
  b.uniform();
  EXPECT_EQ(a.next_u64(), b.next_u64());
  // a one-hot distribution always gives its token, unnormalised probabilities are scaled
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sample_token({0, 0, 3.0}, gen), 2);
}

TEST(Sampling, TopChoicesByProbabilityThenId) {
  const std::vector<double> probs = {0.1, 0.3, 0.1, 0.3, 0.2};
  const std::vector<TokenChoice> top = top_choices(probs, 4);
  std::vector<std::pair<std::int64_t, double>> got;
  for (const TokenChoice& c : top) got.emplace_back(c.id, c.prob);
  EXPECT_EQ(got, (std::vector<std::pair<std::int64_t, double>>{{1, 0.3}, {3, 0.3}, {4, 0.2}, {0, 0.1}}));
  EXPECT_EQ(top_choices(probs, 10).size(), 5u);
  EXPECT_TRUE(top_choices(probs, 0).empty());
}

}  // namespace
}  // namespace cppgrad
