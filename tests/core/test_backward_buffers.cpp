// Backward's buffer economies keep the values: a pending gradient added into in place only when nothing else sees
// its memory (core/autograd.cpp, add_pending), and index_select's gradient written into its zeros
// (core/ops/index_add_to_zeros.h). Each case is built so that the economy done wrongly gives other numbers.
#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/index_add_to_zeros.h"
#include "core/ops/reduce.h"
#include "core/ops/scatter.h"
#include "core/ops/select.h"
#include "test_util.h"

namespace cppgrad {
namespace {

std::vector<double> values(const Tensor& t) { return t.to_double_vector(); }

TEST(BackwardBuffers, AnExpandedPendingGradientIsNotAddedIntoInPlace) {
  // Both of h's gradients come from sum's backward: 2 and 3, each expanded from one element of its own (stride 0).
  // Were the second added into the first in place, that one element would take 3 three times (2 + 3 + 3 + 3 = 11
  // everywhere); out of place each is 2 + 3 = 5.
  Tensor x = Tensor::from_vector<double>({1, 2, 3}, {3});
  x.set_requires_grad(true);
  const Tensor h = mul(x, 1.0);
  add(mul(sum(h), 2.0), mul(sum(h), 3.0)).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{5, 5, 5}));
}

TEST(BackwardBuffers, PrivatePendingGradientsSumAllContributions) {
  // Three contributions into one intermediate, the later ones added into the first's buffer: 2h + 0.75 + 2h, exact
  // in float for these values (any order of the additions gives the same bits).
  Tensor x = Tensor::from_vector<float>({0.5f, -0.25f, 3.0f, 1.0f}, {4});
  x.set_requires_grad(true);
  const Tensor h = mul(x, 1.0);
  add(add(sum(mul(h, h)), sum(mul(h, 0.75))), sum(mul(h, h))).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2.75, -0.25, 12.75, 4.75}));
}

TEST(BackwardBuffers, AWantedGradientIsTheWholeSum) {
  // autograd::grad hands back h's gradient, summed from two contributions (the second added into the first's
  // buffer), and x's through it.
  Tensor x = Tensor::from_vector<double>({1, 2}, {2});
  x.set_requires_grad(true);
  const Tensor h = mul(x, 2.0);
  const Tensor loss = add(sum(mul(h, 5.0)), sum(mul(h, 7.0)));
  const std::vector<Tensor> g = autograd::grad({loss}, {h, x});
  EXPECT_EQ(values(g[0]), (std::vector<double>{12, 12}));
  EXPECT_EQ(values(g[1]), (std::vector<double>{24, 24}));
}

TEST(BackwardBuffers, IndexAddToZerosEqualsIndexAddOnZeros) {
  const Tensor index = Tensor::from_vector<std::int64_t>({2, 0, 2, 2}, {4});  // repeats add up
  const Tensor source = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  const Tensor got = index_add_to_zeros({3, 2}, 0, index, source);
  EXPECT_EQ(values(got), values(index_add(Tensor::zeros({3, 2}), 0, index, source)));
  EXPECT_EQ(values(got), (std::vector<double>{3, 4, 0, 0, 13, 16}));
  // Two calls get two buffers: the result is not a shared zeros.
  const Tensor again = index_add_to_zeros({3, 2}, 0, index, source);
  EXPECT_FALSE(again.same(got));
  EXPECT_EQ(values(got), values(again));
}

TEST(BackwardBuffers, IndexSelectsGradientStaysDifferentiableWithAGraph) {
  // With create_graph the gradient of index_select carries a graph: differentiated again through the zeros' op.
  Tensor x = Tensor::from_vector<double>({1, 2, 3}, {3});
  x.set_requires_grad(true);
  const Tensor index = Tensor::from_vector<std::int64_t>({0, 2, 2}, {3});
  const Tensor y = index_select(x, 0, index);
  Tensor w = Tensor::from_vector<double>({1, 1, 1}, {3});
  w.set_requires_grad(true);
  const std::vector<Tensor> g = autograd::grad({sum(mul(y, w))}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_EQ(values(g[0]), (std::vector<double>{1, 0, 2}));
  ASSERT_TRUE(g[0].requires_grad());
  const std::vector<Tensor> gw = autograd::grad({sum(mul(g[0], Tensor::from_vector<double>({1, 10, 100}, {3})))}, {w});
  EXPECT_EQ(values(gw[0]), (std::vector<double>{1, 100, 100}));
}

}  // namespace
}  // namespace cppgrad
