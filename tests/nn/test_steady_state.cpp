// After warm-up, a training step reuses tensor memory: no new blocks from the system.
#include "core/allocator.h"
#include "nn/seq2seq.h"
#include "optim/adam.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(Allocator, TrainingStepsReuseTensorMemoryInTheSteadyState) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the block cache is off under AddressSanitizer (so it sees every use after free)";
#endif
  Generator gen(0);
  nn::Seq2SeqTransformer model({.d_model = 16, .n_heads = 2, .d_ff = 32, .max_len = 8}, gen);
  optim::Adam adam(model.named_parameters(), {});
  Tensor src = Tensor::randint(1, 10, {16, 8}, gen), dec = Tensor::randint(1, 11, {16, 8}, gen);
  Tensor tgt = Tensor::randint(1, 10, {16, 8}, gen);
  auto step = [&] {
    adam.zero_grad();
    cross_entropy(model.forward(src, dec), tgt).backward();
    adam.step();
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up: the cache fills, Adam creates its moments
  const AllocatorStats before = allocator_stats();
  for (int i = 0; i < 3; ++i) step();
  const AllocatorStats after = allocator_stats();
  EXPECT_EQ(after.system_allocations, before.system_allocations) << "new blocks in the steady state";
  EXPECT_GT(after.reuses, before.reuses);
}

}  // namespace
}  // namespace cppgrad
