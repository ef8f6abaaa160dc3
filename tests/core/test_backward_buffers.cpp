// Backward's buffer economies keep the values: a pending gradient added into in place only when nothing else sees
// its memory (core/autograd.cpp, add_pending), and index_select's gradient written into its zeros
// (core/ops/index_add_to_zeros.h), cross_entropy's gradient written over the probabilities it kept when its rule runs
// once (autograd::rule_runs_once), linear_cross_entropy, which keeps no logits, and attention's backward, which
// computes its weights again. Each case is built so that the economy done wrongly gives other numbers.
#include "core/allocator.h"
#include "core/autograd.h"
#include "core/kernels/attention_batch.h"
#include "core/ops/elementwise.h"
#include "core/ops/index_add_to_zeros.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/scatter.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
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

TEST(BackwardBuffers, ARuleRunsOnceExactlyWhenThePassReleasesTheGraph) {
  Tensor x = Tensor::from_vector<double>({1, 2}, {2});
  x.set_requires_grad(true);
  std::vector<bool> seen;
  const auto probe = [&] {
    return sum(record_op(mul(x.detach(), 1.0), "probe", {x}, [&](const Tensor& g) {
      seen.push_back(autograd::rule_runs_once());
      return TensorList{g};
    }));
  };
  EXPECT_FALSE(autograd::rule_runs_once());  // outside backward
  const Tensor y = probe();
  autograd::grad({y}, {x}, {}, /*retain_graph=*/true);
  autograd::grad({y}, {x}, {}, /*retain_graph=*/false);
  autograd::grad({probe()}, {x}, {}, std::nullopt, /*create_graph=*/true);
  probe().backward();
  EXPECT_EQ(seen, (std::vector<bool>{false, true, false, true}));
  EXPECT_FALSE(autograd::rule_runs_once());  // put back after the pass
}

// Storage blocks this thread took from the allocator (its cache or the system) while f ran.
template <typename F>
std::int64_t storage_blocks_taken(F&& f) {
  const AllocatorStats before = allocator_stats();
  f();
  const AllocatorStats after = allocator_stats();
  return (after.system_allocations + after.reuses) - (before.system_allocations + before.reuses);
}

TEST(BackwardBuffers, CrossEntropyWritesItsGradientOverItsProbabilitiesOnlyWhenItsRuleRunsOnce) {
  // One loss, differentiated twice: first with the graph retained (the rule must leave its probabilities as they
  // were, or the second pass starts from dlogits instead of p and gives other numbers), then released (the rule
  // writes dlogits over p and takes no [N, C] block of its own: one block fewer than the retained pass).
  Generator gen(7);
  Tensor x = Tensor::randn({16, 300}, gen);  // float32: the fused kernel's path
  x.set_requires_grad(true);
  Tensor t = Tensor::randint(0, 300, {16}, gen);
  t.mutable_data<std::int64_t>()[3] = -100;  // an ignored row: zeros in the gradient, in place too
  const Tensor loss = cross_entropy(x, t);
  std::vector<Tensor> retained, released;
  const std::int64_t retained_blocks = storage_blocks_taken([&] { retained = autograd::grad({loss}, {x}, {}, true); });
  const std::int64_t released_blocks = storage_blocks_taken([&] { released = autograd::grad({loss}, {x}, {}, false); });
  EXPECT_EQ(values(released[0]), values(retained[0]));
  EXPECT_EQ(released_blocks, retained_blocks - 1);
  const std::vector<double> row3 = values(released[0].select(0, 3));
  EXPECT_EQ(row3, std::vector<double>(300, 0.0));
  // And both equal the definition's gradient (float64 log_softmax and a gather), to float32 rounding.
  Tensor x64 = x.detach().to(DType::Float64);
  x64.set_requires_grad(true);
  const std::vector<double> want = values(autograd::grad({cross_entropy(x64, t)}, {x64})[0]), got = values(released[0]);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-7) << i;
}

TEST(BackwardBuffers, LinearCrossEntropyIsTheTwoOpsToTheBitAndKeepsNoLogits) {
  // x [2, 5, 16] through a head of 37 classes (the 8-lane kernels' tail) into the loss, an ignored row among them:
  // the fused op and linear then cross_entropy give the same bits, loss and both gradients, whether the graph is
  // kept (a fresh gradient buffer) or released (dlogits over the probabilities).
  Generator gen(11);
  Tensor x = Tensor::randn({2, 5, 16}, gen), w = Tensor::randn({37, 16}, gen);
  x.set_requires_grad(true), w.set_requires_grad(true);
  Tensor t = Tensor::randint(0, 37, {2, 5}, gen);
  t.set({1, 2}, -1);
  const Tensor fused = linear_cross_entropy(x, w, t, -1), two_ops = cross_entropy(linear(x, w), t, -1);
  EXPECT_EQ(fused.item<float>(), two_ops.item<float>());
  // The node reads x and W, nothing of [.., 37]: the logits are not a tensor of the graph.
  ASSERT_EQ(fused.grad_fn()->inputs.size(), 2u);
  EXPECT_TRUE(fused.grad_fn()->inputs[0].same(x) && fused.grad_fn()->inputs[1].same(w));
  const std::vector<Tensor> want = autograd::grad({two_ops}, {x, w});
  for (const bool retain : {true, false}) {
    const std::vector<Tensor> got = autograd::grad({fused}, {x, w}, {}, retain);
    EXPECT_EQ(values(got[0]), values(want[0])) << "retain " << retain;
    EXPECT_EQ(values(got[1]), values(want[1])) << "retain " << retain;
  }
  EXPECT_THROW_MSG(linear_cross_entropy(x, Tensor::randn({37, 15}, gen), t), std::invalid_argument,
                   "linear_cross_entropy: expected x [.., in] and weight [classes, in] of one dtype, got x [2, 5, 16] "
                   "float32 and weight [37, 15] float32");
  EXPECT_THROW_MSG(linear_cross_entropy(x, w, Tensor::randint(0, 37, {2, 4}, gen)), std::invalid_argument,
                   "linear_cross_entropy: target shape [2, 4] must equal the logits' shape without the class dim: "
                   "logits [2, 5, 37] -> [2, 5]");
  Tensor beyond = t.clone();
  beyond.set({0, 0}, 37);
  EXPECT_THROW_MSG(linear_cross_entropy(x, w, beyond, -1), std::out_of_range,
                   "linear_cross_entropy: target 37 at position 0 is out of range for 37 classes (ignore_index is -1)");
}

// The fused attention's rule keeps q, k and v, not the weights P: backward computes each head's P again. Its
// gradients must be those from the forward's P to the bit, on each of the kernel's paths: the products by GEMM
// (>= 16 queries, >= 32 keys and dims), the vector products (a causal mask, a ragged length), and one query.
TEST(BackwardBuffers, AttentionsBackwardComputesTheWeightsAgainToTheBit) {
  struct Shape4 { std::int64_t B, H, Lq, Lk, d; bool causal; };
  Generator gen(12);
  for (const Shape4 c :
       {Shape4{2, 3, 40, 40, 32, true}, Shape4{2, 3, 13, 13, 16, true}, Shape4{3, 2, 1, 5, 8, false}}) {
    const Tensor q = Tensor::randn({c.B, c.H, c.Lq, c.d}, gen), k = Tensor::randn({c.B, c.H, c.Lk, c.d}, gen),
                 v = Tensor::randn({c.B, c.H, c.Lk, c.d}, gen), g = Tensor::randn({c.B, c.H, c.Lq, c.d}, gen);
    Tensor mask;
    if (c.causal) {
      mask = Tensor::zeros({c.Lq, c.Lk}, DType::Bool);
      for (std::int64_t i = 0; i < c.Lq; ++i)
        for (std::int64_t j = 0; j <= i; ++j) mask.set({i, j}, 1);
    }
    const Tensor weights = kernels::attention_forward_batch(q, k, v, mask)[1];
    const auto kept = kernels::attention_backward_batch(g, q, k, v, mask, weights);
    const auto again = kernels::attention_backward_batch(g, q, k, v, mask, Tensor());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(values(again[i]), values(kept[i])) << "Lq " << c.Lq << ", gradient " << i;
  }
}

}  // namespace
}  // namespace cppgrad
