// Stop 9 (docs/learn.md): sampling with a KV cache. Read nn/generate.h and generate.cpp, then nn/kv_cache.h and
// GPT::forward_cached in nn/gpt.cpp.
//
// Question: why does the cache give the same tokens? The attention is causal, so the keys and values of positions
// already read never change when a token is appended: computing them again (nanoGPT's generate) is wasted work.
// Exercise: write greedy decoding the slow way, the whole context through forward() for every token, and check it
// against nn::generate, which keeps the keys and values.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "learn.h"

namespace cppgrad::learn {
namespace {

// The most likely next token after `context` (its last position's logits), appended n times.
std::vector<std::int64_t> greedy_recompute(const nn::GPT& model, std::vector<std::int64_t> context, int n) {
  NoGradGuard no_grad;
  std::vector<std::int64_t> out;
  for (int i = 0; i < n; ++i) {
    const auto T = static_cast<std::int64_t>(context.size());
    const Tensor logits = model.forward(Tensor::from_vector<std::int64_t>(context, {1, T})).logits;  // [1, T, V]
    const std::int64_t row = kPlantedWrong ? 0 : T - 1;  // the mistake: the first position's prediction
    const std::vector<float> last = logits.select(1, row).to_vector<float>();
    const auto next = static_cast<std::int64_t>(std::max_element(last.begin(), last.end()) - last.begin());
    out.push_back(next);
    context.push_back(next);
  }
  return out;
}

TEST(Stop9, TheCachedGreedySampleEqualsTheRecomputedOne) {
  Generator gen(3);
  nn::GPT model({.block_size = 16, .vocab_size = 11, .n_layer = 2, .n_head = 2, .n_embd = 16}, gen);
  model.eval();
  const std::vector<std::int64_t> prompt{1, 5, 2};
  Generator draws(0);
  const std::vector<std::int64_t> cached =
      nn::generate(model, prompt, {.max_new_tokens = 10, .sampling = {.temperature = 0}}, draws);
  EXPECT_EQ(greedy_recompute(model, prompt, 10), cached);
}

}  // namespace
}  // namespace cppgrad::learn
