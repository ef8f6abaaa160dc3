// train/data_parallel.h: the batch's shards, the loss shares, the fixed tree (train/tree.h) that sums the shards'
// gradients and numbers (train/shard_sums.h), and the step that puts them together, bit-identical on any number of
// threads.
#include "train/data_parallel.h"

#include <algorithm>

#include "core/allocator.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "nn/linear.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(DataParallel, TheReplicasOwnWeightsAreNotLeftInTheBuildingThreadsCache) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the block cache is off under AddressSanitizer";
#endif
  // Each replica is built with weights of its own, dropped for the model's: 4 replicas x 64 KiB here. Left cached on
  // this thread, only its later blocks of those sizes could reuse them.
  Generator gen(0);
  train::DataParallel<nn::Linear> parallel({.threads = 2, .shards = 4}, [&] {
    return std::make_unique<nn::Linear>(nn::LinearOptions{.in = 128, .out = 128}, gen);
  });
  EXPECT_EQ(allocator_stats().cached_bytes, 0u);
}

TEST(DataParallel, GradientBytesCountTheParametersThatLearnAsTheyAreNow) {
  Tensor a = Tensor::zeros({3, 4}), b = Tensor::zeros({5}, DType::Float64);
  a.set_requires_grad(true), b.set_requires_grad(true);
  const std::vector<Tensor> params{a, b};
  EXPECT_EQ(train::gradient_bytes(params), 12 * 4 + 5 * 8);
  a.set_requires_grad(false);  // frozen after the list was made: no longer counted
  EXPECT_EQ(train::gradient_bytes(params), 5 * 8);
}

TEST(DataParallel, ShardsAreContiguousCoverTheBatchAndDifferByAtMostOne) {
  const std::vector<std::int64_t> rows = {10, 11, 12, 13, 14, 15, 16};
  std::vector<std::int64_t> joined;
  for (int s = 0; s < 3; ++s) {
    const auto shard = train::worker_slice(rows, s, 3);
    EXPECT_GE(shard.size(), 2u);
    EXPECT_LE(shard.size(), 3u);
    joined.insert(joined.end(), shard.begin(), shard.end());
  }
  EXPECT_EQ(joined, rows);
  EXPECT_EQ(train::worker_slice(rows, 0, 1), rows);
  EXPECT_TRUE(train::worker_slice({1, 2}, 0, 4).empty());  // fewer rows than shards: some shards are empty
}

TEST(DataParallel, SharesAreEachShardsFractionOfTheLossTerms) {
  EXPECT_EQ(train::loss_shares({30, 10}), (std::vector<double>{0.75, 0.25}));
  EXPECT_EQ(train::loss_shares({5}), (std::vector<double>{1.0}));
  EXPECT_EQ(train::loss_shares({0, 0}), (std::vector<double>{0.0, 0.0}));
}

TEST(DataParallel, TheTreeAddsNeighboursFirst) {
  // Float addition is not associative: ((a + b) + (c + d)) and (((a + b) + c) + d) differ here, so a sequential sum
  // (or a tree over other pairs) fails this.
  std::vector<double> v = {1e16, 1.0, -1e16, 1.0};
  train::tree_sum(4, [&](int into, int from) { v[into] += v[from]; });
  EXPECT_EQ(v[0], (1e16 + 1.0) + (-1e16 + 1.0));
  EXPECT_NE(v[0], ((1e16 + 1.0) + -1e16) + 1.0);
  std::vector<double> eight = {1, 2, 3, 4, 5, 6, 7, 8};
  train::tree_sum(8, [&](int into, int from) { eight[into] += eight[from]; });
  EXPECT_EQ(eight[0], 36);
  std::vector<std::pair<int, int>> pairs;  // the additions, in order: level by level
  train::tree_sum(8, [&](int into, int from) { pairs.emplace_back(into, from); });
  EXPECT_EQ(pairs, (std::vector<std::pair<int, int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {4, 6}, {0, 4}}));
}

// A shard's numbers, as a program names them.
struct TwoSums {
  double loss = 0, share = 0;
  std::int64_t rows = 0;
  auto fields() { return std::tie(loss, share, rows); }
};
struct NoSums {
  auto fields() { return std::tie(); }
};

TEST(DataParallel, ShardSumsAddMemberByMemberAndCrossAsDoubles) {
  static_assert(train::sums_width<TwoSums> == 3 && train::sums_width<NoSums> == 0);
  TwoSums a{.loss = 0.5, .share = 0.25, .rows = 3};
  train::add_sums(a, TwoSums{.loss = 1.0, .share = 0.5, .rows = 4});
  EXPECT_EQ(a.loss, 1.5);
  EXPECT_EQ(a.share, 0.75);
  EXPECT_EQ(a.rows, 7);
  EXPECT_EQ(train::sums_to_doubles(a), (std::vector<double>{1.5, 0.75, 7.0}));
  const std::vector<double> back = {2.0, 3.0, 9007199254740992.0};  // 2^53: a count still exact
  const TwoSums b = train::sums_from_doubles<TwoSums>(back.data());
  EXPECT_EQ(b.loss, 2.0);
  EXPECT_EQ(b.share, 3.0);
  EXPECT_EQ(b.rows, std::int64_t{1} << 53);
}

TEST(DataParallel, ShardGradientsAreSummedInTheTreeIntoTheFirstShard) {
  Generator gen(1);
  std::vector<std::unique_ptr<nn::Linear>> shards;
  std::vector<std::vector<Tensor>> params;
  for (int s = 0; s < 4; ++s) {
    shards.push_back(std::make_unique<nn::Linear>(nn::LinearOptions{.in = 2, .out = 2}, gen));
    params.push_back(shards.back()->parameters());
  }
  const double g[4] = {1e8, 1.0, -1e8, 1.0};  // float32: ((1e8 + 1) + (-1e8 + 1)) = 0, a sequential sum 1
  for (int s = 0; s < 4; ++s)
    if (s != 1) params[s][0].set_grad(Tensor::full(params[s][0].shape(), g[s]));  // shard 1: no gradient (zeros)
  train::tree_sum_gradients(params);
  const float expect = (1e8f + 0.0f) + (-1e8f + 1.0f);
  for (const double v : params[0][0].grad().to_double_vector()) EXPECT_EQ(v, expect);
  EXPECT_FALSE(params[0][1].grad().defined());  // no shard reached the bias: it keeps no gradient
}

// A Linear(2 -> 3); the loss of rows is the mean of their outputs squared.
struct LinearRun {
  Tensor x = Tensor::from_vector<float>({0.5f, -1.f, 2.f, 0.25f, -0.75f, 1.5f, 1.f, 1.f, -2.f, 0.5f, 0.125f, -0.5f, 3.f, -1.f,
                                         0.3f, 0.7f, -1.1f, 2.2f},
                                        {9, 2});
  Generator init{5};
  train::DataParallel<nn::Linear> parallel;
  // early_sum: the gradients summed while the shards run (train/gradient_tree.h), as a large model's are.
  explicit LinearRun(int threads, int shards = 4, bool early_sum = false)
      : parallel({.threads = threads, .shards = shards, .sum_early_from_bytes = early_sum ? 0 : std::int64_t{1} << 40},
                 [this] { return std::make_unique<nn::Linear>(nn::LinearOptions{.in = 2, .out = 3}, init); }) {}

  Tensor loss(const nn::Linear& m, const std::vector<std::int64_t>& rows) const {
    const Tensor y = m.forward(index_select(x, 0, Tensor::from_vector<std::int64_t>(rows, {std::ssize(rows)})));
    return mean(mul(y, y));
  }
  // One step's gradients in the model; returns the batch's loss, the shards' shares and rows, summed in the tree.
  TwoSums step(const std::vector<std::int64_t>& rows) {
    parallel.model().zero_grad();
    return parallel.step(rows, [&](nn::Linear& m, const train::Shard& shard) {
      const Tensor l = loss(m, shard.rows);
      l.backward(Tensor::scalar(shard.share, DType::Float32));
      return TwoSums{.loss = shard.share * l.item(), .share = shard.share, .rows = std::ssize(shard.rows)};
    });
  }
};

std::vector<std::vector<float>> grads(const std::vector<Tensor>& params) {
  std::vector<std::vector<float>> g;
  for (const Tensor& p : params) g.push_back(p.grad().to_vector<float>());
  return g;
}

TEST(DataParallel, StepLeavesTheWholeBatchsGradientsInTheModel) {
  LinearRun run(2);
  const std::vector<std::int64_t> rows = {6, 0, 3, 5, 1, 2, 4, 8, 7};
  const TwoSums sums = run.step(rows);
  EXPECT_DOUBLE_EQ(sums.share, 1.0);  // the shares of 2, 2, 2 and 3 rows
  EXPECT_EQ(sums.rows, 9);
  const auto parallel = grads(run.parallel.parameters());

  nn::Linear& model = run.parallel.model();  // the same loss on the whole batch, one model
  model.zero_grad();
  const Tensor whole_loss = run.loss(model, rows);
  whole_loss.backward();
  EXPECT_NEAR(sums.loss, whole_loss.item(), 1e-6);
  const auto whole = grads(model.parameters());
  for (std::size_t i = 0; i < whole.size(); ++i)
    for (std::size_t j = 0; j < whole[i].size(); ++j) EXPECT_NEAR(parallel[i][j], whole[i][j], 1e-6);

  EXPECT_EQ(grads(run.parallel.parameters()), whole);  // (the model's own backward replaced them)
  run.step(rows);  // the shards' gradients of the step before are not added again
  EXPECT_EQ(grads(run.parallel.parameters()), parallel);
}

TEST(DataParallel, AnyThreadCountGivesBitIdenticalGradientsAndSums) {
  const std::vector<std::int64_t> rows = {6, 0, 3, 5, 1, 2, 4, 8, 7};
  LinearRun one(1);
  const std::vector<double> sums = train::sums_to_doubles(one.step(rows));
  const auto reference = grads(one.parallel.parameters());
  for (const int threads : {1, 2, 3, 4, 8})
    for (const bool early_sum : {false, true}) {
      LinearRun run(threads, 4, early_sum);
      for (int step = 0; step < 2; ++step) {  // the second: replicas whose gradients were let go the step before
        EXPECT_EQ(train::sums_to_doubles(run.step(rows)), sums) << threads << " threads, early " << early_sum;
        EXPECT_EQ(grads(run.parallel.parameters()), reference) << threads << " threads, early " << early_sum;
      }
    }
  LinearRun other_shards(1, 2);  // the shard count, unlike the threads, may round differently
  other_shards.step(rows);
  EXPECT_EQ(other_shards.parallel.shards(), 2);
}

TEST(DataParallel, StepSharesFollowTheLossTermsAndReplicasFollowTheModel) {
  LinearRun run(2, 2);
  run.parallel.model().eval();
  const auto loss_terms = [](const std::vector<std::int64_t>& shard) { return shard[0] + 1; };  // rows 0 and 3
  std::vector<double> shares(2);
  run.parallel.step(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}, loss_terms,
                    [&](nn::Linear& m, const train::Shard& shard) {
                      EXPECT_FALSE(m.is_training());
                      EXPECT_NE(&m, &run.parallel.model());  // shards run on replicas, the model holds the sum
                      shares[shard.index] = shard.share;
                      return NoSums{};
                    });
  EXPECT_EQ(shares, (std::vector<double>{1.0 / 5, 4.0 / 5}));

  LinearRun small(2);  // a batch smaller than the shards leaves shards empty: they are skipped
  std::vector<int> ran;
  small.parallel.step(std::vector<std::int64_t>{4, 1}, [&](nn::Linear&, const train::Shard& shard) {
    ran.push_back(shard.index);
    return NoSums{};
  });
  std::sort(ran.begin(), ran.end());
  EXPECT_EQ(ran, (std::vector<int>{1, 3}));
}

TEST(DataParallel, AssignedWeightsAreTheModelsAndEveryReplicasWithoutACopy) {
  Generator gen(0), other(1);
  train::DataParallel<nn::Linear> parallel({.threads = 2, .shards = 4}, [&] {
    return std::make_unique<nn::Linear>(nn::LinearOptions{.in = 4, .out = 3}, gen);
  });
  nn::Linear source({.in = 4, .out = 3}, other);
  const nn::StateDict state = {{"weight", source.weight().detach().clone()}, {"bias", source.bias().detach().clone()}};
  const std::vector<float> before = parallel.model().weight().to_vector<float>();
  nn::StateDict missing = state;
  missing.erase("bias");
  EXPECT_THROW_MSG(parallel.assign_state_dict(missing), std::invalid_argument, "missing entry 'bias'");
  EXPECT_EQ(parallel.model().weight().to_vector<float>(), before);
  {  // refused by the model's assign once the replicas let go: they share the model's memory again
    const Tensor held = parallel.model().weight().detach();
    EXPECT_THROW_MSG(parallel.assign_state_dict(state), std::logic_error, "'weight' shares its memory");
  }
  parallel.step(std::vector<std::int64_t>{0, 1, 2, 3}, [&](nn::Linear& m, const train::Shard&) {
    EXPECT_EQ(m.weight().data<float>(), parallel.model().weight().data<float>());
    return NoSums{};
  });
  parallel.assign_state_dict(state);
  EXPECT_EQ(parallel.model().weight().data<float>(), state.at("weight").data<float>()) << "assigned, not copied";
  // Every shard runs on a replica that reads the assigned memory, and an update of the model is theirs too.
  parallel.model().bias().add_(Tensor::ones({3}));
  std::vector<std::vector<float>> seen(4);
  parallel.step(std::vector<std::int64_t>{0, 1, 2, 3}, [&](nn::Linear& m, const train::Shard& shard) {
    EXPECT_EQ(m.weight().data<float>(), state.at("weight").data<float>());
    seen[shard.index] = m.bias().to_vector<float>();
    return NoSums{};
  });
  const std::vector<float> bias = parallel.model().bias().to_vector<float>();
  for (const auto& b : seen) EXPECT_EQ(b, bias);
}

TEST(DataParallel, ShardAndProcessCountsAreChecked) {
  EXPECT_NO_THROW(train::check_shards(8, 4));
  EXPECT_THROW_MSG(train::check_shards(6, 1), std::invalid_argument, "shard count must be a power of two");
  EXPECT_THROW_MSG(train::check_shards(8, 3), std::invalid_argument, "3 processes cannot share 8 shards");
  EXPECT_THROW_MSG(train::check_shards(4, 8), std::invalid_argument, "8 processes cannot share 4 shards");
  // A run that named no shard count has 2: the refusal says which flag lets 4 processes share the batch.
  EXPECT_THROW_MSG(train::check_shards(2, 4), std::invalid_argument, "give --shards 4 or a larger power of two");
}

TEST(DataParallel, TheDefaultShardCountDependsOnTheBatchAlone) {
  EXPECT_EQ(train::default_shards(1), 1);  // one row cannot be cut
  for (const std::int64_t batch : {2, 3, 8, 32, 64, 65'536}) EXPECT_EQ(train::default_shards(batch), 2) << batch;
}

TEST(DataParallel, ShardSeedsDifferByShardAndStep) {
  EXPECT_NE(train::shard_seed(1, 0), train::shard_seed(1, 1));
  EXPECT_NE(train::shard_seed(1, 0), train::shard_seed(2, 0));
  EXPECT_EQ(train::shard_seed(7, 3), train::shard_seed(7, 3));
}

}  // namespace
}  // namespace cppgrad
