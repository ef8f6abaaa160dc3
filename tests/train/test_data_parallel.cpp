// train/data_parallel.h: the batch's slices, the loss shares and the gradient sum over worker replicas.
#include "train/data_parallel.h"

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

}  // namespace
}  // namespace cppgrad
