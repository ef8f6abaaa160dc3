// distributed/tree_sum.h: the sum over ranks in the fixed tree ((r0 + r1) + (r2 + r3)), and all_gather. The values
// are chosen so that float32 rounds the tree's order and a sequential (or MPI's) order differently: a wrong pairing
// gives other bits than the ones worked out here, in the shards' tree's order (train/tree.h: header-only, so this
// binary needs no training layer).
#include "distributed/tree_sum.h"

#include "test_util.h"
#include "tests/distributed/group.h"
#include "train/tree.h"

namespace cppgrad {
namespace {

using test::group;

// Rank r's value at element i: large ones that cancel, and ones that only survive when added to each other first.
float value_of(int r, int i) {
  const float big = 1e8f * static_cast<float>(i + 1);
  return r % 4 == 0 ? big : r % 4 == 2 ? -big : 1.0f;
}

// The sum of the n ranks' values in the shards' tree (train::tree_sum), with one value per rank.
float tree_of(int n, int i) {
  std::vector<float> v;
  for (int r = 0; r < n; ++r) v.push_back(value_of(r, i));
  train::tree_sum(n, [&](int into, int from) { v[into] = v[into] + v[from]; });
  return v[0];
}

TEST(Distributed, TreeSumAddsRanksInTheTreesOrder) {
  const int n = group().world_size(), r = group().rank();
  const Tensor a = Tensor::from_vector<float>({value_of(r, 0), value_of(r, 1), value_of(r, 2)}, {3});
  const Tensor b = Tensor::full({2, 2}, static_cast<double>(r + 1), DType::Float64);
  distributed::tree_sum(group(), {a, Tensor(), b});  // an undefined tensor (no gradient) is skipped
  const std::vector<float> got = a.to_vector<float>();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i], tree_of(n, i)) << "element " << i;
  if (n == 4) {
    float sequential = 0;  // what a sum in rank order would give: the test can tell the two apart
    for (int q = 0; q < 4; ++q) sequential += value_of(q, 0);
    EXPECT_NE(tree_of(4, 0), sequential);
  }
  for (const double v : b.to_double_vector()) EXPECT_EQ(v, n * (n + 1) / 2.0);
}

TEST(Distributed, TreeSumRefusesTensorsThatDifferBetweenRanks) {
  const int r = group().rank();
  const Tensor t = Tensor::zeros({r == 0 ? 2 : 3});
  EXPECT_THROW(distributed::tree_sum(group(), {t}), std::invalid_argument);
}

TEST(Distributed, AllGatherConcatenatesInRankOrder) {
  const int n = group().world_size(), r = group().rank();
  const std::vector<double> all = distributed::all_gather(group(), {10.0 * r, 10.0 * r + 1});
  ASSERT_EQ(all.size(), static_cast<std::size_t>(2 * n));
  for (int q = 0; q < n; ++q) {
    EXPECT_EQ(all[2 * q], 10.0 * q);
    EXPECT_EQ(all[2 * q + 1], 10.0 * q + 1);
  }
}

}  // namespace
}  // namespace cppgrad
