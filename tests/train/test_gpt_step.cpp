// train/gpt_step.h: the GPT's plain step and its sharded step. At one shard the sharded step is the plain step, bit
// for bit (the same losses and the same weights after several AdamW steps, float32); on more shards the same batch's
// mean loss, summed in another order; and the comparison can fail (another lr gives other bits).
#include "train/gpt_step.h"

#include <memory>

#include "data/token_batch.h"
#include "optim/adam.h"
#include "test_util.h"

namespace cppgrad {
namespace {

const nn::GPTConfig kConfig{.block_size = 8, .vocab_size = 11, .n_layer = 2, .n_head = 2, .n_embd = 16};

// Lines of unequal length (so the batches have padding, targets -1) over a vocabulary of 11.
std::vector<std::vector<std::int64_t>> lines() {
  return {{1, 2, 3}, {4, 5, 6, 7, 8}, {9, 10}, {2, 4, 6, 8, 10, 1}, {3}, {5, 7, 9, 1, 3}, {6, 6, 6, 6}, {10, 9, 8}};
}

// Batch k: 6 of the lines, a different choice each step.
data::TokenBatch batch(int k) {
  std::vector<std::int64_t> rows;
  for (int i = 0; i < 6; ++i) rows.push_back((k * 3 + i * 5) % 8);
  return data::lines_batch(lines(), rows, kConfig.block_size);
}

std::unique_ptr<optim::Adam> adamw(nn::GPT& model, double lr) {
  return std::make_unique<optim::Adam>(model.named_parameters(),
                                       optim::AdamOptions{.lr = lr, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8,
                                                          .weight_decay = 0.01, .decoupled_weight_decay = true});
}

struct Steps {
  std::vector<double> losses;
  std::vector<std::vector<float>> weights;
};

std::vector<std::vector<float>> weights_of(const nn::GPT& model) {
  std::vector<std::vector<float>> w;
  for (const Tensor& p : model.parameters()) w.push_back(p.to_vector<float>());
  return w;
}

// Four plain steps from the model seed 3 draws.
Steps plain_run(double lr = 1e-2) {
  Generator init(3);
  nn::GPT model(kConfig, init);
  const auto optimizer = adamw(model, lr);
  Steps r;
  for (int k = 0; k < 4; ++k) r.losses.push_back(train::plain_step(model, batch(k), *optimizer, /*clip_grad=*/1.0));
  r.weights = weights_of(model);
  return r;
}

// The same four steps through the sharded step, on `shards` shards and `threads` threads.
Steps sharded_run(int shards, int threads, double lr = 1e-2) {
  Generator init(3);
  train::DataParallel<nn::GPT> parallel({.threads = threads, .shards = shards},
                                        [&] { return std::make_unique<nn::GPT>(kConfig, init); });
  const auto optimizer = adamw(parallel.model(), lr);
  Steps r;
  for (int k = 0; k < 4; ++k)
    r.losses.push_back(train::sharded_step(parallel, batch(k), *optimizer, /*clip_grad=*/1.0));
  r.weights = weights_of(parallel.model());
  return r;
}

TEST(GptStep, ShardedStepOnOneShardIsThePlainStepBitForBit) {
  const Steps plain = plain_run(), sharded = sharded_run(/*shards=*/1, /*threads=*/1);
  EXPECT_EQ(sharded.losses, plain.losses);
  EXPECT_EQ(sharded.weights, plain.weights);
  EXPECT_LT(plain.losses.back(), plain.losses.front());  // it trains
}

TEST(GptStep, TheComparisonCatchesADifference) {
  const Steps plain = plain_run(), other = sharded_run(1, 1, /*lr=*/1.001e-2);
  EXPECT_EQ(other.losses.front(), plain.losses.front());  // the first loss comes before any update
  EXPECT_NE(other.losses, plain.losses);
  EXPECT_NE(other.weights, plain.weights);
}

TEST(GptStep, ShardsGiveTheBatchsMeanLossOnAnyThreadCount) {
  const Steps plain = plain_run(), four = sharded_run(4, 1), four_on_two = sharded_run(4, 2);
  EXPECT_EQ(four_on_two.losses, four.losses);  // the threads never change the bits
  EXPECT_EQ(four_on_two.weights, four.weights);
  for (std::size_t k = 0; k < plain.losses.size(); ++k) EXPECT_NEAR(four.losses[k], plain.losses[k], 1e-5) << k;
}

TEST(GptStep, ShardPassReportsItsShareOfTheLossAndItsTokens) {
  Generator init(3);
  nn::GPT model(kConfig, init);
  const data::TokenBatch b = batch(0);
  const train::LmSums sums = train::shard_pass(model, b, 0.25);
  EXPECT_EQ(sums.tokens, b.tokens);
  EXPECT_DOUBLE_EQ(sums.loss, 0.25 * model.forward(b.idx, b.targets).loss.item());
}

}  // namespace
}  // namespace cppgrad
