// distributed/collectives.h: world size and ranks, all_reduce (sum and mean), broadcast and barrier across the ranks
// of one mpirun, and the checks that refuse a misuse on every rank at once. Inputs depend on the rank, so a rank that
// reduced only its own tensor, or another rank's, gets values other than the ones worked out here.
#include "distributed/collectives.h"

#include <cstring>

#include "test_util.h"
#include "tests/distributed/group.h"

namespace cppgrad {
namespace {

using distributed::ReduceOp;
using test::group;

// Rank 0's copy of t, broadcast to every rank, equal to t bit for bit: the ranks agree exactly.
bool same_bits_as_rank_0(const Tensor& t) {
  const Tensor rank0 = t.clone();
  distributed::broadcast(group(), rank0, 0);
  const std::vector<double> mine = t.to_double_vector(), theirs = rank0.to_double_vector();  // float -> double: exact
  return std::memcmp(mine.data(), theirs.data(), mine.size() * sizeof(double)) == 0;
}

TEST(Distributed, WorldSizeAndRanksCoverEveryProcessOnce) {
  const int n = group().world_size();
  if (test::expected_world_size() > 0) {
    EXPECT_EQ(n, test::expected_world_size());
  }
  EXPECT_GE(group().rank(), 0);
  EXPECT_LT(group().rank(), n);
  // One-hot at this rank's index, summed: every index exactly once.
  const Tensor seen = Tensor::zeros({n}, DType::Float64);
  seen.set({group().rank()}, 1.0);
  distributed::all_reduce(group(), seen);
  EXPECT_EQ(seen.to_vector<double>(), std::vector<double>(static_cast<std::size_t>(n), 1.0));
}

TEST(Distributed, AllReduceSumIsTheSumOverRanksInBothDtypes) {
  const int n = group().world_size(), r = group().rank();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    // Rank r holds 10 r + i at element i: the sum is 10 n (n - 1) / 2 + n i, exact in either dtype.
    std::vector<double> mine, want;
    for (int i = 0; i < 6; ++i) {
      mine.push_back(10.0 * r + i);
      want.push_back(10.0 * n * (n - 1) / 2 + n * i);
    }
    const Tensor t = Tensor::from_vector(mine, {2, 3}, dtype);
    distributed::all_reduce(group(), t, ReduceOp::Sum);
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.to_double_vector(), want) << dtype_name(dtype);
  }
}

TEST(Distributed, AllReduceMeanIsTheSumDividedByTheWorldSize) {
  const int n = group().world_size(), r = group().rank();
  // Rank r holds (r + 1) (i + 1): the mean is (n + 1) / 2 (i + 1), exact for n = 2 and 4.
  const Tensor t = Tensor::from_vector(std::vector<double>{1.0 * (r + 1), 2.0 * (r + 1), 3.0 * (r + 1)}, {3},
                                       DType::Float32);
  distributed::all_reduce(group(), t, ReduceOp::Mean);
  const double m = (n + 1) / 2.0;
  EXPECT_EQ(t.to_double_vector(), (std::vector<double>{m, 2 * m, 3 * m}));
}

TEST(Distributed, AllReduceOfRandomValuesIsBitIdenticalOnEveryRank) {
  const int n = group().world_size();
  Generator mine(100 + static_cast<std::uint64_t>(group().rank()));
  const Tensor t = Tensor::randn({1000}, mine, DType::Float32);
  distributed::all_reduce(group(), t);
  // Within rounding of the sum worked out here from every rank's inputs (MPI adds them in an order of its own).
  Tensor want = Tensor::zeros({1000}, DType::Float64);
  for (int r = 0; r < n; ++r) {
    Generator theirs(100 + static_cast<std::uint64_t>(r));
    want.add_(Tensor::randn({1000}, theirs, DType::Float32).to(DType::Float64));
  }
  test::expect_all_close(t, want, 1e-5);
  EXPECT_TRUE(same_bits_as_rank_0(t));
}

TEST(Distributed, BroadcastGivesEveryRankTheSourcesTensorInAnyDtype) {
  const int n = group().world_size(), r = group().rank(), src = n - 1;
  const Tensor f = Tensor::full({2, 2}, 0.5 + r, DType::Float32);
  const Tensor i = Tensor::from_vector(std::vector<std::int64_t>{r, 1000 * r, -r}, {3});
  distributed::broadcast(group(), f, src);
  distributed::broadcast(group(), i, src);
  EXPECT_EQ(f.to_double_vector(), std::vector<double>(4, 0.5 + src));
  EXPECT_EQ(i.to_vector<std::int64_t>(), (std::vector<std::int64_t>{src, 1000 * src, -src}));
}

TEST(Distributed, BarrierReturnsOnEveryRank) {
  distributed::barrier(group());
  const Tensor after = Tensor::ones({1}, DType::Float64);
  distributed::all_reduce(group(), after);  // still in step after the barrier
  EXPECT_EQ(after.item<double>(), group().world_size());
}

// The check that must fail: a view whose elements are not laid out in order cannot be handed to MPI as it is.
TEST(Distributed, AllReduceRefusesANonContiguousViewNamingItsShape) {
  const Tensor t = Tensor::zeros({3, 4}, DType::Float32).t();
  EXPECT_THROW_MSG(distributed::all_reduce(group(), t), std::invalid_argument,
                   "all_reduce: expected a contiguous tensor, got a view [4, 3] float32");
  EXPECT_THROW_MSG(distributed::all_reduce(group(), Tensor::zeros({2}, DType::Int64)), std::invalid_argument,
                   "all_reduce: expected a float32 or float64 tensor, got [2] int64");
  EXPECT_THROW_MSG(distributed::broadcast(group(), Tensor::zeros({2}), group().world_size()), std::invalid_argument,
                   "broadcast: src " + std::to_string(group().world_size()) + " is not a rank of this group");
}

TEST(Distributed, AMisuseOnOneRankThrowsOnEveryRankAndLeavesThemInStep) {
  if (group().world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const bool first = group().rank() == 0;
  const Tensor t = first ? Tensor::zeros({3, 4}).t() : Tensor::zeros({4, 3});
  if (first) {
    EXPECT_THROW_MSG(distributed::all_reduce(group(), t), std::invalid_argument, "expected a contiguous tensor");
  } else {
    EXPECT_THROW_MSG(distributed::all_reduce(group(), t), std::invalid_argument,
                     "all_reduce: rank 0 refused its own tensors (its message says why) (this is rank " +
                         std::to_string(group().rank()) + ": [4, 3] float32)");
  }
  const Tensor next = Tensor::ones({2});
  distributed::all_reduce(group(), next);
  EXPECT_EQ(next.to_double_vector(), std::vector<double>(2, group().world_size()));
}

TEST(Distributed, TensorsThatDifferBetweenRanksAreRefusedOnEveryRank) {
  if (group().world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const bool first = group().rank() == 0;
  EXPECT_THROW_MSG(distributed::all_reduce(group(), Tensor::zeros({first ? 4 : 5})), std::invalid_argument,
                   "all_reduce: the tensors differ between ranks: rank 0 has 4 elements, rank 1 has 5");
  EXPECT_THROW_MSG(distributed::all_reduce(group(), Tensor::zeros(first ? Shape{2, 3} : Shape{3, 2})),
                   std::invalid_argument, "rank 1 has another shape, dtype or root than rank 0, with as many elements");
  EXPECT_THROW_MSG(distributed::all_reduce(group(), Tensor::zeros({2}, first ? DType::Float32 : DType::Float64)),
                   std::invalid_argument, "the tensors differ between ranks");
  EXPECT_THROW_MSG(distributed::broadcast(group(), Tensor::zeros({2}), first ? 0 : 1), std::invalid_argument,
                   "broadcast: the tensors differ between ranks");
}

}  // namespace
}  // namespace cppgrad
