// Stop 7 (docs/learn.md): the GPT's forward. Read nn/gpt.h, then nn/gpt.cpp from GPT::forward back up through
// Block, MLP and GPTAttention (nn/attention.h has the attention's math).
//
// Questions: how many parameters does a GPT have, from its config alone? And what loss should a model that knows
// nothing give? Uniform guesses over V tokens cost ln V nats each; GPT-2's small init (N(0, 0.02)) is close to that.
// Exercise: count the parameters by formula, and check the loss at initialisation.
#include <cmath>
#include <cstdint>

#include "learn.h"

namespace cppgrad::learn {
namespace {

// wte [V, C] (lm_head reads the same table) + wpe [block_size, C] + per block: ln_1 and ln_2 (2C each), c_attn
// [3C, C] + 3C, attn.c_proj [C, C] + C, c_fc [4C, C] + 4C, mlp.c_proj [C, 4C] + C; then ln_f (2C).
std::int64_t gpt_parameters(const nn::GPTConfig& c) {
  const std::int64_t C = c.n_embd;
  const std::int64_t block = 2 * 2 * C + (3 * C * C + 3 * C) + (C * C + C) + (4 * C * C + 4 * C) + (4 * C * C + C);
  const std::int64_t embeddings = kPlantedWrong ? c.vocab_size * C  // the mistake: forgot the positions
                                                : c.vocab_size * C + c.block_size * C;
  return embeddings + c.n_layer * block + 2 * C;
}

TEST(Stop7, TheParameterCountFollowsFromTheConfig) {
  for (const nn::GPTConfig c : {nn::GPTConfig{.block_size = 8, .vocab_size = 11, .n_layer = 2, .n_head = 2, .n_embd = 8},
                                nn::GPTConfig{.block_size = 16, .vocab_size = 27, .n_layer = 3, .n_head = 4, .n_embd = 32}}) {
    Generator gen(0);
    EXPECT_EQ(gpt_parameters(c), nn::GPT(c, gen).num_parameters());
  }
  EXPECT_EQ(gpt_parameters(nn::GPTConfig{.vocab_size = 50257}), 124439808);  // GPT-2 small, as nanoGPT counts it
}

TEST(Stop7, AnUntrainedModelLosesAboutLnVNatsPerToken) {
  Generator gen(0);
  const nn::GPT model({.block_size = 16, .vocab_size = 27, .n_layer = 2, .n_head = 2, .n_embd = 16}, gen);
  const Tensor idx = Tensor::randint(0, 27, {4, 16}, gen), targets = Tensor::randint(0, 27, {4, 16}, gen);
  EXPECT_NEAR(model.forward(idx, targets).loss.item(), std::log(27.0), 0.05);
}

}  // namespace
}  // namespace cppgrad::learn
