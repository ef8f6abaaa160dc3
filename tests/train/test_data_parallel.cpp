// train/data_parallel.h: the batch's slices, the loss shares and the gradient sum over worker replicas, and the step
// that puts them together.
#include "train/data_parallel.h"

#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "nn/linear.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(DataParallel, SlicesAreContiguousCoverTheBatchAndDifferByAtMostOne) {
  const std::vector<std::int64_t> rows = {10, 11, 12, 13, 14, 15, 16};
  std::vector<std::int64_t> joined;
  for (int w = 0; w < 3; ++w) {
    const auto slice = train::worker_slice(rows, w, 3);
    EXPECT_GE(slice.size(), 2u);
    EXPECT_LE(slice.size(), 3u);
    joined.insert(joined.end(), slice.begin(), slice.end());
  }
  EXPECT_EQ(joined, rows);
  EXPECT_EQ(train::worker_slice(rows, 0, 1), rows);
}

TEST(DataParallel, SharesAreEachWorkersFractionOfTheLossTerms) {
  EXPECT_EQ(train::loss_shares({30, 10}), (std::vector<double>{0.75, 0.25}));
  EXPECT_EQ(train::loss_shares({5}), (std::vector<double>{1.0}));
}

TEST(DataParallel, ReplicaGradientsAreAddedIntoTheModelsOnly) {
  Generator gen(1);
  nn::Linear model(nn::LinearOptions{.in = 2, .out = 2}, gen), replica(nn::LinearOptions{.in = 2, .out = 2}, gen);
  replica.share_parameters_with(model);
  const std::vector<std::vector<Tensor>> params = {model.parameters(), replica.parameters()};
  for (std::size_t i = 0; i < params[0].size(); ++i) {
    params[0][i].set_grad(Tensor::full(params[0][i].shape(), 1.0));
    params[1][i].set_grad(Tensor::full(params[1][i].shape(), 2.0));
  }
  train::sum_replica_gradients(params, 2);
  for (std::size_t i = 0; i < params[0].size(); ++i) {
    for (const double g : params[0][i].grad().to_double_vector()) EXPECT_EQ(g, 3.0);
    for (const double g : params[1][i].grad().to_double_vector()) EXPECT_EQ(g, 2.0);
  }
  train::sum_replica_gradients(params, 1);  // one worker: nothing to add
  for (const double g : params[0][0].grad().to_double_vector()) EXPECT_EQ(g, 3.0);
}

// A Linear(2 -> 3) and its replicas; the loss of rows is the mean of their outputs squared.
struct LinearRun {
  Tensor x = Tensor::from_vector<float>({0.5f, -1.f, 2.f, 0.25f, -0.75f, 1.5f, 1.f, 1.f, -2.f, 0.5f, 0.125f, -0.5f, 3.f, -1.f}, {7, 2});
  Generator init{5};
  train::DataParallel<nn::Linear> parallel{3, [this] {
    return std::make_unique<nn::Linear>(nn::LinearOptions{.in = 2, .out = 3}, init);
  }};

  Tensor loss(const nn::Linear& m, const std::vector<std::int64_t>& rows) const {
    const Tensor y = m.forward(index_select(x, 0, Tensor::from_vector<std::int64_t>(rows, {std::ssize(rows)})));
    return mean(mul(y, y));
  }
  // One step's gradients in the model, and the shares the workers were given.
  std::vector<double> step(const std::vector<std::int64_t>& rows) {
    parallel.model().zero_grad();
    return parallel.step(rows, [&](nn::Linear& m, const std::vector<std::int64_t>& slice, double share) {
      loss(m, slice).backward(Tensor::scalar(share, DType::Float32));
      return share;
    });
  }
};

std::vector<std::vector<double>> grads(const std::vector<Tensor>& params) {
  std::vector<std::vector<double>> g;
  for (const Tensor& p : params) g.push_back(p.grad().to_double_vector());
  return g;
}

TEST(DataParallel, StepLeavesTheWholeBatchsGradientsInTheModel) {
  LinearRun run;
  ASSERT_EQ(run.parallel.worker_count(), 3);
  const std::vector<std::int64_t> rows = {6, 0, 3, 5, 1, 2, 4};
  const std::vector<double> shares = run.step(rows);
  EXPECT_EQ(shares, (std::vector<double>{2.0 / 7, 2.0 / 7, 3.0 / 7}));  // slices of 2, 2 and 3 rows
  const auto parallel = grads(run.parallel.parameters());

  nn::Linear& model = run.parallel.model();  // the same loss on the whole batch, one model
  model.zero_grad();
  run.loss(model, rows).backward();
  const auto whole = grads(model.parameters());
  for (std::size_t i = 0; i < whole.size(); ++i)
    for (std::size_t j = 0; j < whole[i].size(); ++j) EXPECT_NEAR(parallel[i][j], whole[i][j], 1e-6);

  run.step(rows);  // the replicas' gradients of the step before are not added again
  EXPECT_EQ(grads(run.parallel.parameters()), parallel);
}

TEST(DataParallel, StepSharesFollowTheLossTermsAndReplicasFollowTheModel) {
  LinearRun run;
  std::vector<const nn::Linear*> synced;
  run.parallel.sync_replicas_with([&](nn::Linear& replica, nn::Linear& model) {
    EXPECT_EQ(&model, &run.parallel.model());
    synced.push_back(&replica);
  });
  run.parallel.model().eval();
  const auto loss_terms = [](const std::vector<std::int64_t>& slice) { return slice[0] + 1; };  // rows 0, 2, 4
  const std::vector<double> shares =
      run.parallel.step(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}, loss_terms,
                        [&](nn::Linear& m, const std::vector<std::int64_t>&, double share) {
                          EXPECT_FALSE(m.is_training());
                          return share;
                        });
  EXPECT_EQ(shares, (std::vector<double>{1.0 / 9, 3.0 / 9, 5.0 / 9}));
  EXPECT_EQ(synced, (std::vector<const nn::Linear*>{run.parallel.workers()[1], run.parallel.workers()[2]}));

  synced.clear();  // a batch smaller than the workers runs on as many as it has rows
  EXPECT_EQ(run.parallel.workers_for(2), 2);
  EXPECT_EQ(run.step({4, 1}), (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(synced, std::vector<const nn::Linear*>{run.parallel.workers()[1]});
}

}  // namespace
}  // namespace cppgrad
