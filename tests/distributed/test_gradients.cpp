// distributed/gradients.h: DDP's bucket assignment, gradients averaged over the ranks in buckets (bucket by bucket,
// equal to the mean worked out by hand, the same bits on every rank, and a model's whole-batch gradient from each
// rank's share of the batch), and every rank starting from rank 0's parameters.
#include "distributed/gradients.h"

#include <cstring>

#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "distributed/collectives.h"
#include "nn/linear.h"
#include "test_util.h"
#include "tests/distributed/group.h"

namespace cppgrad {
namespace {

using test::group;

// A leaf parameter of `shape` whose gradient is `grad`.
Tensor param_with_grad(const Shape& shape, DType dtype, const std::vector<double>& grad) {
  Tensor p = Tensor::zeros(shape, dtype);
  p.set_requires_grad();
  p.set_grad(Tensor::from_vector(grad, shape, dtype));
  return p;
}

TEST(Distributed, BucketsGatherConsecutiveTensorsOfOneDtypeUpToTheirBytes) {
  // 12, 20, 16 (float64), 40 and 8 bytes in 32-byte buckets: [12 + 20], [16: a new dtype], [40: alone, too big], [8].
  const std::vector<Tensor> t = {Tensor::zeros({3}), Tensor::zeros({5}), Tensor::zeros({2}, DType::Float64),
                                 Tensor::zeros({10}), Tensor::zeros({2})};
  const auto buckets = distributed::assign_buckets(t, 32);
  ASSERT_EQ(buckets.size(), 4u);
  const std::vector<std::pair<std::size_t, std::size_t>> want = {{0, 2}, {2, 3}, {3, 4}, {4, 5}};
  for (std::size_t b = 0; b < want.size(); ++b) {
    EXPECT_EQ(buckets[b].begin, want[b].first) << "bucket " << b;
    EXPECT_EQ(buckets[b].end, want[b].second) << "bucket " << b;
  }
  EXPECT_EQ(distributed::assign_buckets(t, distributed::kDefaultBucketBytes).size(), 3u);  // the dtype still splits
}

TEST(Distributed, AverageGradientsIsTheMeanOverRanksAcrossSeveralBuckets) {
  const int n = group().world_size(), r = group().rank();
  // Rank r's gradient element k of parameter j is (r + 1) (k + 1 + j / 4): the mean is (n + 1) / 2 times
  // (k + 1 + j / 4), exact for n = 2 and 4. 24-byte buckets split the parameters over five buckets.
  const std::vector<Shape> shapes = {{2, 3}, {4}, {3}, {1}, {2, 2}};
  const std::vector<DType> dtypes = {DType::Float32, DType::Float32, DType::Float64, DType::Float64, DType::Float32};
  std::vector<Tensor> params;
  std::vector<std::vector<double>> want;
  for (std::size_t j = 0; j < shapes.size(); ++j) {
    std::vector<double> mine, mean;
    for (std::int64_t k = 0; k < numel_of(shapes[j]); ++k) {
      mine.push_back((r + 1) * (k + 1 + j / 4.0));
      mean.push_back((n + 1) / 2.0 * (k + 1 + j / 4.0));
    }
    params.push_back(param_with_grad(shapes[j], dtypes[j], mine));
    want.push_back(mean);
  }
  Tensor frozen = Tensor::zeros({2});  // no gradient on any rank: left without one
  params.push_back(frozen);
  std::vector<Tensor> grads;
  for (std::size_t j = 0; j < shapes.size(); ++j) grads.push_back(params[j].grad());
  EXPECT_GT(distributed::assign_buckets(grads, 24).size(), 1u);

  distributed::average_gradients(group(), params, 24);
  for (std::size_t j = 0; j < shapes.size(); ++j) {
    EXPECT_EQ(params[j].grad().shape(), shapes[j]);
    EXPECT_EQ(params[j].grad().dtype(), dtypes[j]);
    EXPECT_EQ(params[j].grad().to_double_vector(), want[j]) << "parameter " << j;
  }
  EXPECT_FALSE(frozen.grad().defined());
}

TEST(Distributed, AveragedRandomGradientsAreTheMeanAndTheSameBitsOnEveryRank) {
  const int n = group().world_size();
  const std::vector<Shape> shapes = {{17, 5}, {5}, {300}, {7, 7}};
  auto grads_of = [&](int rank) {  // rank's gradients, drawn from its own seed
    Generator gen(500 + static_cast<std::uint64_t>(rank));
    std::vector<Tensor> g;
    for (const Shape& s : shapes) g.push_back(Tensor::randn(s, gen, DType::Float32));
    return g;
  };
  std::vector<Tensor> params;
  for (const Tensor& g : grads_of(group().rank())) {
    params.push_back(Tensor::zeros(g.shape()).set_requires_grad());
    params.back().set_grad(g);
  }
  distributed::average_gradients(group(), params, 256);  // 64 floats a bucket: the 300 alone, the others together
  for (std::size_t j = 0; j < shapes.size(); ++j) {
    Tensor mean = Tensor::zeros(shapes[j], DType::Float64);
    for (int r = 0; r < n; ++r) mean.add_(grads_of(r)[j].to(DType::Float64));
    test::expect_all_close(params[j].grad(), mean / static_cast<double>(n), 1e-6);
    const Tensor rank0 = params[j].grad().clone();
    distributed::broadcast(group(), rank0, 0);
    const auto mine = params[j].grad().to_vector<float>(), theirs = rank0.to_vector<float>();
    EXPECT_EQ(std::memcmp(mine.data(), theirs.data(), mine.size() * sizeof(float)), 0) << "parameter " << j;
  }
}

TEST(Distributed, EachRanksShareOfTheBatchAveragedGivesTheWholeBatchsGradient) {
  const int n = group().world_size(), r = group().rank();
  Generator data(3);
  const Tensor x = Tensor::randn({8, 3}, data), y = Tensor::randn({8, 2}, data);
  Generator init_whole(7), init_rank(11 + static_cast<std::uint64_t>(r));  // each rank starts elsewhere ...
  nn::Linear whole(nn::LinearOptions{.in = 3, .out = 2}, init_whole), mine(nn::LinearOptions{.in = 3, .out = 2}, init_rank);
  if (r == 0) {
    for (std::size_t j = 0; j < mine.parameters().size(); ++j) mine.parameters()[j].copy_(whole.parameters()[j]);
  }
  distributed::broadcast_parameters(group(), mine.parameters());  // ... and starts from rank 0's weights
  // Rank r's rows [8 r / n, 8 (r + 1) / n): the mean of the ranks' mean squared errors is the whole batch's.
  const std::int64_t begin = 8 * r / n, end = 8 * (r + 1) / n;
  mean(pow(mine.forward(x.narrow(0, begin, end - begin)) - y.narrow(0, begin, end - begin), 2.0)).backward();
  distributed::average_gradients(group(), mine.parameters());
  mean(pow(whole.forward(x) - y, 2.0)).backward();
  for (std::size_t j = 0; j < whole.parameters().size(); ++j) {
    EXPECT_EQ(mine.parameters()[j].to_vector<float>(), whole.parameters()[j].to_vector<float>());
    test::expect_all_close(mine.parameters()[j].grad(), whole.parameters()[j].grad(), 1e-6);
  }
}

TEST(Distributed, BroadcastParametersGivesEveryRankTheSourcesValues) {
  const int r = group().rank();
  const std::vector<Tensor> params = {Tensor::full({2, 3}, 1.0 + r, DType::Float32),
                                      Tensor::full({4}, -2.0 * r, DType::Float64)};
  distributed::broadcast_parameters(group(), params);
  EXPECT_EQ(params[0].to_double_vector(), std::vector<double>(6, 1.0));
  EXPECT_EQ(params[1].to_double_vector(), std::vector<double>(4, 0.0));
}

TEST(Distributed, AverageGradientsRefusesAGradientItCannotReduceOnEveryRank) {
  const Tensor p = Tensor::zeros({3, 2}).set_requires_grad(), q = Tensor::zeros({2}).set_requires_grad();
  p.set_grad(Tensor::zeros({2, 3}).t());
  q.set_grad(Tensor::zeros({2}));
  EXPECT_THROW_MSG(distributed::average_gradients(group(), {q, p}), std::invalid_argument,
                   "average_gradients: gradient 1: expected a contiguous tensor, got a view [3, 2] float32");
  EXPECT_THROW_MSG(distributed::average_gradients(group(), {q}, 0), std::invalid_argument,
                   "average_gradients: bucket_bytes must be positive, got 0");
  if (group().world_size() < 2) return;
  const Tensor maybe = Tensor::zeros({2}).set_requires_grad();  // a gradient on rank 0 only
  if (group().rank() == 0) maybe.set_grad(Tensor::ones({2}));
  EXPECT_THROW_MSG(distributed::average_gradients(group(), {q, maybe}), std::invalid_argument,
                   "average_gradients: the tensors differ between ranks");
}

}  // namespace
}  // namespace cppgrad
