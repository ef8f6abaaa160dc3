// train/reversal_step.h: the reversal model's plain step and its sharded step. At one shard the sharded step is the
// plain step, bit for bit (losses, teacher-forced counts, gradient norms, weights after several Adam steps); on two
// shards, one thread or two give the same bits.
#include "train/reversal_step.h"

#include <memory>

#include "optim/adam.h"
#include "test_util.h"

namespace cppgrad {
namespace {

const data::ReversalConfig kData{.vocab = 8, .min_len = 3, .max_len = 6, .train_size = 64, .test_size = 8, .seed = 5};

nn::Seq2SeqOptions options() {
  return {.src_vocab = kData.vocab, .tgt_vocab = kData.decoder_vocab(), .out_vocab = kData.vocab + 2, .d_model = 16,
          .n_heads = 2, .d_ff = 32, .max_len = kData.target_len() + 1};
}

std::vector<std::int64_t> rows(int k) {  // batch k: 12 rows, a different choice each step
  std::vector<std::int64_t> r;
  for (int i = 0; i < 12; ++i) r.push_back((k * 7 + i * 5) % kData.train_size);
  return r;
}

struct Steps {
  std::vector<train::ReversalStep> steps;
  std::vector<std::vector<float>> weights;
};

std::vector<std::vector<float>> weights_of(const nn::Seq2SeqTransformer& model) {
  std::vector<std::vector<float>> w;
  for (const Tensor& p : model.parameters()) w.push_back(p.to_vector<float>());
  return w;
}

// Three steps, plain (shards 0) or sharded.
Steps run(int shards, int threads) {
  const data::ReversalData d = data::make_reversal_data(kData);
  Generator init(3);
  train::DataParallel<nn::Seq2SeqTransformer> parallel(
      {.threads = threads, .shards = std::max(shards, 1)},
      [&] { return std::make_unique<nn::Seq2SeqTransformer>(options(), init); });
  optim::Adam adam(parallel.model().named_parameters(), optim::AdamOptions{.lr = 1e-2});
  Steps r;
  for (int k = 0; k < 3; ++k)
    r.steps.push_back(shards == 0 ? train::plain_step(parallel.model(), data::gather_batch(d.train, rows(k), true),
                                                      adam, /*clip_grad=*/1.0)
                                  : train::sharded_step(parallel, d.train, rows(k), true, adam, /*clip_grad=*/1.0));
  r.weights = weights_of(parallel.model());
  return r;
}

void expect_same(const Steps& a, const Steps& b) {
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].loss, b.steps[i].loss) << "step " << i;
    EXPECT_EQ(a.steps[i].grad_norm, b.steps[i].grad_norm) << "step " << i;
    EXPECT_EQ(a.steps[i].teacher_forced.right_tokens, b.steps[i].teacher_forced.right_tokens) << "step " << i;
    EXPECT_EQ(a.steps[i].teacher_forced.tokens, b.steps[i].teacher_forced.tokens) << "step " << i;
  }
  EXPECT_EQ(a.weights, b.weights);
}

TEST(ReversalStep, OneShardIsThePlainStepBitForBit) { expect_same(run(0, 1), run(1, 1)); }

TEST(ReversalStep, TwoShardsGiveTheSameBitsOnOneThreadOrTwo) {
  const Steps one = run(2, 1), two = run(2, 2);
  expect_same(one, two);
  EXPECT_NEAR(one.steps[0].loss, run(0, 1).steps[0].loss, 1e-5);  // the batch's mean loss, summed in another order
  EXPECT_EQ(one.steps[0].teacher_forced.rows, 12);
}

}  // namespace
}  // namespace cppgrad
