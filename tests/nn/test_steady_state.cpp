// After warm-up, a training step reuses tensor memory: no new blocks from the system.
#include <array>
#include <cstring>
#include <memory>

#include "core/allocator.h"
#include "core/allocator_release.h"
#include "core/ops/softmax.h"
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

TEST(Allocator, ReleasingTheCacheGivesItsBlocksBackAndTheNextSameSizeIsNew) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the block cache is off under AddressSanitizer";
#endif
  release_cached_storage();  // whatever earlier tests left on this thread
  EXPECT_EQ(allocator_stats().cached_bytes, 0u);
  constexpr std::size_t kBytes = 3 << 20;  // a size no other test here uses
  free_storage(allocate_storage(kBytes), kBytes);
  EXPECT_EQ(allocator_stats().cached_bytes, kBytes) << "a freed block is cached";
  const AllocatorStats kept = allocator_stats();
  free_storage(allocate_storage(kBytes), kBytes);  // served by the cache
  EXPECT_EQ(allocator_stats().reuses, kept.reuses + 1);
  EXPECT_EQ(allocator_stats().system_allocations, kept.system_allocations);
  release_cached_storage();
  EXPECT_EQ(allocator_stats().cached_bytes, 0u) << "released";
  const AllocatorStats released = allocator_stats();
  void* p = allocate_storage(kBytes);
  EXPECT_EQ(allocator_stats().system_allocations, released.system_allocations + 1) << "the released block came back";
  EXPECT_EQ(allocator_stats().reuses, released.reuses);
  free_storage(p, kBytes);
  release_cached_storage();
}

TEST(Allocator, SmallObjectsReuseFreedBlocksOfTheirSizeClass) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the small-object lists are off under AddressSanitizer";
#endif
  // A freed block is handed out again for any size in its 16-byte class, and not for another class.
  void* a = allocate_small(40);
  free_small(a, 40);
  void* b = allocate_small(48);  // same class as 40: (40 - 1) / 16 == (48 - 1) / 16
  EXPECT_EQ(b, a);
  void* c = allocate_small(64);  // the next class: a fresh block
  EXPECT_NE(c, b);
  // Blocks are usable to their full requested size, and sizes past the lists go to operator new and back.
  std::memset(b, 0xab, 48);
  std::memset(c, 0xcd, 64);
  void* big = allocate_small(kMaxSmallBytes + 1);
  std::memset(big, 0, kMaxSmallBytes + 1);
  free_small(big, kMaxSmallBytes + 1);
  free_small(c, 64);
  free_small(b, 48);
  // Through allocate_shared, as tensors and nodes use it.
  auto first = std::allocate_shared<std::array<double, 5>>(PoolAllocator<std::array<double, 5>>());
  const void* where = first.get();
  first.reset();
  auto second = std::allocate_shared<std::array<double, 5>>(PoolAllocator<std::array<double, 5>>());
  EXPECT_EQ(second.get(), where);
}

}  // namespace
}  // namespace cppgrad
