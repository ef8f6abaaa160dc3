// nn::init::SkipInit (nn/init.h): a model whose values a load replaces draws none of them, and its generator ends where
// drawing them would have left it, so whatever is drawn next (a finetune's LoRA adapters) is the same bits.
#include <memory>
#include <vector>

#include "core/autograd.h"
#include "core/generator.h"
#include "nn/gpt.h"
#include "nn/init.h"
#include "nn/lora.h"
#include "nn_test_util.h"

namespace cppgrad {
namespace {

TEST(SkipInit, TheInitialisersLeaveValuesAloneAndMoveTheGeneratorOn) {
  const Tensor p = Tensor::full({3, 5}, 7.0);
  Generator skipped(3), drawn(3);
  {
    const nn::init::SkipInit skip;
    EXPECT_TRUE(nn::init::init_skipped());
    NoGradGuard no_grad;
    nn::init::normal_(p, 0.02, skipped);
    EXPECT_EQ(nn::init::uniform({4}, -1, 1, skipped).shape(), (Shape{4}));
    EXPECT_EQ(nn::init::normal({2, 3}, skipped).shape(), (Shape{2, 3}));
    const nn::init::SkipInit draw(false);  // drawing again inside
    EXPECT_FALSE(nn::init::init_skipped());
    Generator copy = skipped;
    EXPECT_EQ(nn::init::normal({2}, skipped).to_vector<float>(), Tensor::randn({2}, copy).to_vector<float>());
  }
  EXPECT_FALSE(nn::init::init_skipped());
  EXPECT_EQ(p.to_vector<float>(), std::vector<float>(15, 7.0f));  // not drawn
  const Tensor q = Tensor::full({3, 5}, 7.0);
  {
    NoGradGuard no_grad;
    nn::init::normal_(q, 0.02, drawn);
  }
  EXPECT_NE(q.to_vector<float>(), p.to_vector<float>());
  nn::init::uniform({4}, -1, 1, drawn), nn::init::normal({2, 3}, drawn), nn::init::normal({2}, drawn);
  EXPECT_EQ(skipped.state(), drawn.state());
}

// A GPT built under SkipInit, then adapted outside it, has the adapters of one built and adapted as usual.
TEST(SkipInit, AdaptersDrawnAfterASkippedGptAreTheSameBits) {
  const nn::GPTConfig config{.block_size = 8, .vocab_size = 32, .n_layer = 2, .n_head = 2, .n_embd = 16};
  const nn::LoRAOptions lora{.rank = 2, .alpha = 4};
  Generator drawn_gen(5), skipped_gen(5);
  nn::GPT drawn(config, drawn_gen);
  const auto skipped = [&] {
    const nn::init::SkipInit skip;
    return std::make_unique<nn::GPT>(config, skipped_gen);
  }();
  EXPECT_EQ(drawn_gen.state(), skipped_gen.state());
  nn::add_lora(drawn, {"c_attn", "c_fc"}, lora, drawn_gen);
  nn::add_lora(*skipped, {"c_attn", "c_fc"}, lora, skipped_gen);
  const nn::NamedTensors want = drawn.named_trainable_parameters(), got = skipped->named_trainable_parameters();
  ASSERT_EQ(want.size(), 2u * 2 * 2);  // A and B of two matrices in two blocks
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(got[i].second.to_vector<float>(), want[i].second.to_vector<float>()) << want[i].first;
  }
}

}  // namespace
}  // namespace cppgrad
