// core/kernels/scratch.h: a kernel's per-thread scratch is 64-byte aligned at every size (a packed panel's vector
// loads must not split cache lines), grows when asked for more and keeps its block when asked for less.
#include "core/kernels/scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace cppgrad::kernels {
namespace {

bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

TEST(KernelScratch, EveryBlockIs64ByteAlignedAndWholeToItsLastValue) {
  ScratchBuffer<float> scratch;
  // Sizes that are not whole cache lines, small and past malloc's mmap threshold (whose blocks start 16 bytes into
  // a page): a std::vector<float> would be 16-byte aligned at some of them.
  for (std::size_t n : {1u, 3u, 17u, 1000u, 33'000u, 139'264u, 1'000'003u}) {
    float* p = scratch.get(n);
    EXPECT_TRUE(aligned64(p)) << n << " floats at " << p;
    std::memset(p, 0, n * sizeof(float));  // all of it is ours
    p[n - 1] = 1.0f;
  }
}

TEST(KernelScratch, AskingForLessKeepsTheBlockAndForMoreGrowsIt) {
  ScratchBuffer<double> scratch;
  double* big = scratch.get(4096);
  EXPECT_EQ(scratch.get(10), big) << "a smaller request reuses the block";
  EXPECT_EQ(scratch.get(4096), big);
  double* bigger = scratch.get(1 << 20);
  EXPECT_TRUE(aligned64(bigger));
  bigger[(1 << 20) - 1] = 2.0;
}

}  // namespace
}  // namespace cppgrad::kernels
