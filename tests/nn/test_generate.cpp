// generate() with the KV cache against generate_recompute(), the whole prefix every token (nn/generate.h): token for
// token, greedy and sampled, past the context (the crop), with a stop token, from a prompt longer than the context;
// a cache with a shifted position gives other tokens (so the comparison can fail); what on_step reports; refusals.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "nn/generate.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using namespace nn;

// An untrained GPT with its weights scaled up 5x (wte N(0, 0.1) rather than 0.02), so its next-token distributions
// are peaked (the likeliest token has probability 0.26 on average over a sample, not 1/11) but samples still vary:
// at GPT-2's init every distribution is within a few percent of uniform, and the same uniform draws would pick the
// same tokens from almost any model, a broken one included.
std::unique_ptr<GPT> sharp_model(DType dtype, std::uint64_t seed = 0) {
  Generator gen(seed);
  auto model = std::make_unique<GPT>(
      GPTConfig{.block_size = 12, .vocab_size = 11, .n_layer = 2, .n_head = 2, .n_embd = 16}, gen);
  model->to(dtype);
  model->eval();
  NoGradGuard no_grad;
  for (const auto& [name, p] : model->named_parameters())
    if (name.ends_with(".weight") && name.find("ln_") == std::string::npos) p.copy_(mul(p, 5.0));
  return model;
}

const std::vector<std::int64_t> kPrompt = {3, 1, 4};

struct Case {
  const char* name;
  SamplingConfig sampling;
};
const std::vector<Case>& cases() {
  static const std::vector<Case> c = {{"greedy", {.temperature = 0}},
                                      {"T=1", {}},
                                      {"T=0.8 top-k 4", {.temperature = 0.8, .top_k = 4}},
                                      {"T=1.3 top-p 0.8", {.temperature = 1.3, .top_p = 0.8}}};
  return c;
}

// 40 tokens from a 3-token prompt in a context of 12: 31 of them predicted from a cropped window.
TEST(Generate, EqualsRecomputeTokenForTokenPastTheContext) {
  for (const DType dtype : {DType::Float64, DType::Float32}) {
    const auto model = sharp_model(dtype);
    for (const Case& c : cases()) {
      const GenerateOptions options{.max_new_tokens = 40, .sampling = c.sampling};
      Generator g1(42), g2(42);
      const std::vector<std::int64_t> cached = generate(*model, kPrompt, options, g1);
      const std::vector<std::int64_t> recomputed = generate_recompute(*model, kPrompt, options, g2);
      EXPECT_EQ(cached.size(), 40u) << c.name;
      EXPECT_EQ(cached, recomputed) << c.name << " " << dtype_name(dtype);
      EXPECT_EQ(g1.next_u64(), g2.next_u64()) << c.name;  // one draw per token on both
    }
  }
}

TEST(Generate, EqualsRecomputeFromAPromptLongerThanTheContext) {
  const auto model = sharp_model(DType::Float32, 1);
  const std::vector<std::int64_t> prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 1, 2, 3, 4};  // 15 > 12
  const GenerateOptions options{.max_new_tokens = 20, .sampling = {.temperature = 0.9}};
  Generator g1(3), g2(3);
  EXPECT_EQ(generate(*model, prompt, options, g1), generate_recompute(*model, prompt, options, g2));
}

// Lines mode: the sample ends at the stop token, which is not returned but is reported to on_step. The stop token is
// one the same run draws at its 6th token without one, so the run with it must be that run cut before its first
// occurrence.
TEST(Generate, StopsAtTheStopTokenWithoutReturningIt) {
  const auto model = sharp_model(DType::Float32, 2);
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    Generator g0(seed), g1(seed), g2(seed);
    const std::vector<std::int64_t> free_run = generate_recompute(*model, {0}, {.max_new_tokens = 30}, g0);
    const std::int64_t stop = free_run[5];
    const std::vector<std::int64_t> want(free_run.begin(), std::find(free_run.begin(), free_run.end(), stop));
    const GenerateOptions options{.max_new_tokens = 30, .stop_token = stop};
    std::vector<std::int64_t> reported;
    const std::vector<std::int64_t> cached =
        generate(*model, {0}, options, g1, [&](const GenerateStep& s) { reported.push_back(s.token); });
    EXPECT_EQ(cached, want) << "seed " << seed;
    EXPECT_EQ(generate_recompute(*model, {0}, options, g2), want) << "seed " << seed;
    ASSERT_EQ(reported.size(), want.size() + 1);
    EXPECT_EQ(reported.back(), stop);
  }
}

// The comparison above can fail: sampling with a cache whose positions are shifted by one from the third token on
// (the bug an off-by-one in `length` makes) chooses other tokens than the recomputed reference with the same seed.
TEST(Generate, AShiftedCachePositionGivesOtherTokens) {
  const auto model = sharp_model(DType::Float32);
  Generator reference_gen(5);
  const std::vector<std::int64_t> want = generate_recompute(*model, kPrompt, {.max_new_tokens = 8}, reference_gen);
  for (const std::int64_t shift : {-1, +1}) {
    Generator gen(5);
    KVCache cache = model->make_cache(1);
    std::vector<std::int64_t> got;
    Tensor logits = model->forward_cached(Tensor::from_vector(kPrompt, {1, 3}), cache);  // [1, 3, V]
    while (got.size() < 8) {  // 3 + 8 positions, one more with the shift: within the context of 12
      got.push_back(sample_token(next_token_probs(logits.select(0, 0).select(0, -1).to_double_vector(), {}), gen));
      if (got.size() == 2) cache.length += shift;
      logits = model->forward_cached(Tensor::from_vector(std::vector<std::int64_t>{got.back()}, {1, 1}), cache);
    }
    EXPECT_TRUE(std::equal(got.begin(), got.begin() + 2, want.begin())) << "the tokens before the shift agree";
    EXPECT_NE(got, want) << "shift " << shift;
  }
}

TEST(Generate, OnStepReportsTheRawAndFilteredTopFive) {
  const auto model = sharp_model(DType::Float64);
  const GenerateOptions options{.max_new_tokens = 6, .sampling = {.temperature = 0.5, .top_k = 3}};
  Generator gen(9);
  std::vector<GenerateStep> steps;
  const std::vector<std::int64_t> out = generate(*model, kPrompt, options, gen, [&](const GenerateStep& s) {
    steps.push_back(s);
  });
  ASSERT_EQ(steps.size(), out.size());
  for (const GenerateStep& s : steps) {
    ASSERT_EQ(s.raw_top.size(), 5u);
    ASSERT_EQ(s.filtered_top.size(), 5u);
    double raw = 0, filtered = 0;
    for (std::size_t i = 0; i < 5; ++i) raw += s.raw_top[i].prob, filtered += s.filtered_top[i].prob;
    EXPECT_LT(raw, 1.0);                     // 5 of 11 tokens at temperature 1: some mass elsewhere
    EXPECT_NEAR(filtered, 1.0, 1e-12);       // top-k 3: everything in the first three
    EXPECT_EQ(s.filtered_top[3].prob, 0.0);
    EXPECT_GT(s.filtered_top[0].prob, s.raw_top[0].prob);  // temperature 0.5 sharpens
    EXPECT_EQ(s.filtered_top[0].id, s.raw_top[0].id);      // and keeps the order
    bool listed = false;
    for (std::size_t i = 0; i < 3; ++i) listed |= s.filtered_top[i].id == s.token && s.filtered_top[i].prob == s.prob;
    EXPECT_TRUE(listed) << "the chosen token " << s.token << " is one of the three kept";
  }
}

TEST(Generate, RefusesMisuseNamingIt) {
  const auto model = sharp_model(DType::Float32);
  Generator gen(0);
  const GenerateOptions ok{.max_new_tokens = 3};
  EXPECT_THROW_MSG(generate(*model, {}, ok, gen), std::invalid_argument, "generate: the prompt is empty");
  EXPECT_THROW_MSG(generate_recompute(*model, {1, 11}, ok, gen), std::invalid_argument,
                   "generate_recompute: prompt token 11 (at 1) is outside the vocabulary [0, 11)");
  EXPECT_THROW_MSG(generate(*model, {1}, {.max_new_tokens = -1}, gen), std::invalid_argument,
                   "max_new_tokens must be >= 0, got -1");
  EXPECT_THROW_MSG(generate(*model, {1}, {.max_new_tokens = 3, .stop_token = 12}, gen), std::invalid_argument,
                   "stop_token 12 is outside the vocabulary [0, 11)");
  EXPECT_THROW_MSG(generate(*model, {1}, {.max_new_tokens = 3, .sampling = {.top_k = -2}}, gen),
                   std::invalid_argument, "--top-k must be >= 0");
  EXPECT_TRUE(generate(*model, {1}, {.max_new_tokens = 0}, gen).empty());

  Generator init(1);
  GPT dropped({.block_size = 4, .vocab_size = 5, .n_layer = 1, .n_head = 1, .n_embd = 4, .dropout = 0.2}, init);
  EXPECT_THROW_MSG(generate(dropped, {1}, ok, gen), std::invalid_argument,
                   "generate: the model is in training mode with dropout 0.2: call eval() first");
  EXPECT_THROW_MSG(generate_recompute(dropped, {1}, ok, gen), std::invalid_argument, "call eval() first");
}

}  // namespace
}  // namespace cppgrad
