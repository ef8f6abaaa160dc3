// The tensor itself: factories, dtypes, views that share storage, broadcasting, and error messages.
#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(Tensor, CopyOntoAnOverlappingViewOfItselfIsAMemmove) {
  // Short rows are copied by a loop, long ones by memmove; a row that overlaps its source must come out as a memmove
  // would leave it either way (the source's values before the copy).
  for (std::int64_t n : {10, 100}) {
    const Tensor t = Tensor::arange(0, n).to(DType::Float32);
    t.slice(0, 1, n).copy_(t.slice(0, 0, n - 1));
    const auto v = t.to_vector<float>();
    EXPECT_EQ(v[0], 0.0f);
    for (std::int64_t i = 1; i < n; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], static_cast<float>(i - 1)) << "n " << n;
  }
}

TEST(Tensor, AddInPlaceReadsAnyLayoutAndRefusesMismatches) {
  Tensor dst = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  dst.add_(Tensor::from_vector<float>({10, 20, 30, 40, 50, 60}, {3, 2}).t());  // a transposed source
  EXPECT_EQ(dst.to_vector<float>(), (std::vector<float>{11, 32, 53, 24, 45, 66}));
  EXPECT_THROW_MSG(dst.add_(Tensor::ones({3, 2})), std::invalid_argument, "add_: source [3, 2]");
}

TEST(Tensor, FactoriesFillAndShape) {
  Tensor z = Tensor::zeros({2, 3});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.dtype(), DType::Float32);
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(Tensor::ones({3}, DType::Float64).to_vector<double>(), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(Tensor::full({2}, 7.5).to_vector<float>(), (std::vector<float>{7.5f, 7.5f}));
  EXPECT_EQ(Tensor::arange(2, 6).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(Tensor::scalar(3.0).dim(), 0);
  EXPECT_DOUBLE_EQ(Tensor::scalar(3.0).item(), 3.0);
  EXPECT_THROW_MSG(Tensor::from_vector<float>({1, 2, 3}, {2, 2}), std::invalid_argument, "3 values do not fill shape [2, 2]");
}

TEST(Tensor, AllFourDtypes) {
  EXPECT_EQ(Tensor::zeros({1}, DType::Float32).dtype(), DType::Float32);
  EXPECT_EQ(Tensor::zeros({1}, DType::Float64).dtype(), DType::Float64);
  EXPECT_EQ(Tensor::zeros({1}, DType::Int64).dtype(), DType::Int64);
  Tensor mask = Tensor::from_vector<bool>({true, false}, {2});
  EXPECT_EQ(mask.dtype(), DType::Bool);
  EXPECT_EQ(mask.to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_THROW_MSG(mask.data<float>(), std::invalid_argument, "tensor has dtype bool, asked for float32");
}

TEST(Tensor, ConversionBetweenDtypes) {
  Tensor x = Tensor::from_vector<double>({1.5, -2.25}, {2});
  EXPECT_EQ(x.to(DType::Float32).to_vector<float>(), (std::vector<float>{1.5f, -2.25f}));
  EXPECT_EQ(x.to(DType::Int64).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, -2}));
  EXPECT_TRUE(x.to(DType::Float64).same(x));  // no copy when the dtype already matches
}

TEST(Tensor, RandomFactoriesAreReproducibleFromTheirGenerator) {
  Generator a(42), b(42), c(43);
  EXPECT_EQ(Tensor::randn({5}, a).to_vector<float>(), Tensor::randn({5}, b).to_vector<float>());
  EXPECT_NE(Tensor::randn({5}, a).to_vector<float>(), Tensor::randn({5}, c).to_vector<float>());
  Generator g(1);
  for (auto v : Tensor::randint(3, 7, {100}, g).to_vector<std::int64_t>()) {
    EXPECT_GE(v, 3);
    EXPECT_LT(v, 7);
  }
  for (auto v : Tensor::rand({100}, g).to_vector<float>()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

// randn fills in chunks, the log and cos on the pool's threads (Generator::fill_normal): the values must be those of
// calls of normal() one after another, across chunk boundaries, and the generator must end where those calls leave it.
TEST(Tensor, RandnIsNormalDrawnInOrder) {
  const std::int64_t n = (std::int64_t{1} << 17) + 777;  // two whole chunks and a part
  Generator bulk(9), one_by_one(9);
  const std::vector<float> f = Tensor::randn({n}, bulk).to_vector<float>();
  const std::vector<double> d = Tensor::randn({n}, bulk, DType::Float64).to_vector<double>();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) wrong += f[i] != static_cast<float>(one_by_one.normal());
  for (std::int64_t i = 0; i < n; ++i) wrong += d[i] != one_by_one.normal();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(bulk.state(), one_by_one.state());
}

// Skipping draws (nn/init.h's SkipInit) leaves the state where making them would: by steps for few, by powers of the
// update's bit matrix for many (from 2^20 draws: a normal is two), both held to draws made one by one. The comparison
// can fail: one draw fewer leaves another state.
TEST(Tensor, GeneratorSkipsExactlyTheDrawsItWouldMake) {
  for (const std::uint64_t n : {0, 1, 7, 1000, (1 << 19) - 1, (1 << 19) + 5, (1 << 20) + 1, 3 << 20}) {
    Generator skipped(11), drawn(11), one_short(11);
    skipped.skip_normals(n);
    skipped.skip_uniforms(n);
    for (std::uint64_t i = 0; i < n; ++i) drawn.normal();
    for (std::uint64_t i = 0; i < n; ++i) drawn.uniform();
    EXPECT_EQ(skipped.state(), drawn.state()) << n;
    if (n == 0) continue;
    for (std::uint64_t i = 0; i < n; ++i) one_short.normal();
    for (std::uint64_t i = 0; i + 1 < n; ++i) one_short.uniform();
    EXPECT_NE(skipped.state(), one_short.state()) << n;
  }
}

// all_finite finds one NaN or Inf wherever it lies (first, last, either side of the scan's blocks of 4096), in float
// and double and in a strided view; the largest finite values and subnormals are finite.
TEST(Tensor, AllFiniteFindsEveryNonFiniteValue) {
  const std::int64_t n = 3 * 4096 + 5;
  for (const DType dtype : {DType::Float32, DType::Float64}) {
    const double largest = dtype == DType::Float32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
    const double subnormal = dtype == DType::Float32 ? 1e-45 : 5e-324;
    const Tensor clean = Tensor::full({n}, 1.5, dtype);
    clean.set({7}, largest), clean.set({8}, -largest), clean.set({9}, subnormal);
    EXPECT_TRUE(clean.all_finite());
    for (const double bad : {std::nan(""), double{INFINITY}, -double{INFINITY}})
      for (const std::int64_t at : {std::int64_t{0}, std::int64_t{4095}, std::int64_t{4096}, std::int64_t{8191}, n - 1}) {
        const Tensor t = clean.clone();
        t.set({at}, bad);
        EXPECT_FALSE(t.all_finite()) << dtype_name(dtype) << " " << bad << " at " << at;
        const Tensor two_rows = Tensor::full({2, n}, 1.5, dtype);
        two_rows.set({1, at}, bad);
        ASSERT_FALSE(two_rows.t().is_contiguous());  // [n, 2] read across rows: the other path
        EXPECT_FALSE(two_rows.t().all_finite()) << dtype_name(dtype) << " " << bad << " at " << at;
      }
  }
}

TEST(Tensor, GeneratorStateRoundTrips) {
  Generator g(5);
  g.next_u64();
  const auto state = g.state();
  const auto expected = g.next_u64();
  Generator h(0);
  h.set_state(state);
  EXPECT_EQ(h.next_u64(), expected);
}

TEST(Tensor, RandnHasUnitMoments) {
  Generator g(3);
  const auto v = Tensor::randn({20000}, g, DType::Float64).to_vector<double>();
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= v.size();
  for (double x : v) s += (x - m) * (x - m);
  s /= v.size();
  EXPECT_NEAR(m, 0.0, 0.03);
  EXPECT_NEAR(s, 1.0, 0.05);
}

// ---------------------------------------------------------------- views share storage
TEST(TensorViews, TransposeSharesStorageAndSwapsStrides) {
  Tensor x = Tensor::arange(0, 6, DType::Float32).reshape({2, 3});
  Tensor t = x.t();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.strides(), (Strides{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  t.set({0, 1}, 42.0);  // writes through to x[1, 0]
  EXPECT_EQ(x.at({1, 0}), 42.0);
}

TEST(TensorViews, SliceNarrowSelect) {
  Tensor x = Tensor::arange(0, 12, DType::Float64).reshape({3, 4});
  EXPECT_EQ(x.slice(1, 1, 3).to_vector<double>(), (std::vector<double>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(x.slice(0, 0, 3, 2).to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(x.slice(1, -2, 100).to_vector<double>(), (std::vector<double>{2, 3, 6, 7, 10, 11}));
  EXPECT_EQ(x.narrow(0, 1, 1).to_vector<double>(), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(x.select(1, 3).to_vector<double>(), (std::vector<double>{3, 7, 11}));
  EXPECT_EQ(x.slice(1, 1, 3).offset(), 1);
}

TEST(TensorViews, UnsqueezeSqueezePermute) {
  Tensor x = Tensor::zeros({2, 3});
  EXPECT_EQ(x.unsqueeze(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(x.unsqueeze(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(1).squeeze(1).shape(), (Shape{2, 3}));
  EXPECT_EQ(x.squeeze(0).shape(), (Shape{2, 3}));  // not size 1: unchanged, as PyTorch
  Tensor y = Tensor::arange(0, 24, DType::Float32).reshape({2, 3, 4});
  Tensor p = y.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.at({1, 1, 2}), y.at({1, 2, 1}));
  EXPECT_THROW_MSG(y.permute({0, 0, 1}), std::invalid_argument, "appears twice");
}

TEST(TensorViews, ExpandUsesZeroStrides) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {2, 1});
  Tensor e = x.expand({3, 2, 4});
  EXPECT_EQ(e.shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(e.strides(), (Strides{0, 1, 0}));
  EXPECT_EQ(e.at({2, 1, 3}), 2.0);
  EXPECT_THROW_MSG(x.expand({3, 3}), std::invalid_argument, "cannot expand [2, 1] to [3, 3]");
}

TEST(TensorViews, ViewAndReshapeCopyOnlyWhenTheyMust) {
  Tensor x = Tensor::arange(0, 6, DType::Float32).reshape({2, 3});
  Tensor v = x.view({3, 2});
  v.set({0, 0}, 9.0);
  EXPECT_EQ(x.at({0, 0}), 9.0);  // a view: shared storage
  EXPECT_EQ(x.view({-1}).shape(), (Shape{6}));
  Tensor t = x.t();
  EXPECT_THROW_MSG(t.view({6}), std::invalid_argument, "not contiguous");
  Tensor r = t.reshape({6});  // must copy
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{9, 3, 1, 4, 2, 5}));
  r.set({0}, -1.0);
  EXPECT_EQ(x.at({0, 0}), 9.0);
  EXPECT_THROW_MSG(x.view({4, -1}), std::invalid_argument, "cannot view [2, 3] (6 elements) as [4, -1]");
}

TEST(TensorViews, ContiguousAndClone) {
  Tensor x = Tensor::arange(0, 6, DType::Float32).reshape({2, 3});
  EXPECT_TRUE(x.contiguous().same(x));
  Tensor c = x.t().contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  Tensor k = x.clone();
  k.set({0, 0}, 5.0);
  EXPECT_EQ(x.at({0, 0}), 0.0);
}

// ---------------------------------------------------------------- broadcasting and messages
TEST(TensorBroadcast, ShapesFollowNumPyRules) {
  EXPECT_EQ(broadcast_shapes({2, 1, 8}, {3, 1}, "t"), (Shape{2, 3, 8}));
  EXPECT_EQ(broadcast_shapes({}, {4}, "t"), (Shape{4}));
  Tensor a = Tensor::ones({2, 1, 3});
  Tensor b = Tensor::arange(0, 4, DType::Float32).reshape({4, 1});
  Tensor c = add(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(c.at({1, 3, 2}), 4.0);
}

TEST(TensorErrors, ValuesThatDoNotFitInt64AreRefused) {
  // As PyTorch: torch.tensor(1e19, dtype=torch.int64) raises; converting would be undefined behaviour.
  EXPECT_THROW_MSG(Tensor::scalar(1e19, DType::Int64), std::invalid_argument, "fill_: value");
  EXPECT_THROW_MSG(Tensor::scalar(std::nan(""), DType::Int64), std::invalid_argument, "cannot be converted to int64");
  EXPECT_THROW_MSG(Tensor::from_vector({1.0, -1e300}, {2}, DType::Int64), std::invalid_argument, "from_vector");
  Tensor t = Tensor::zeros({2}, DType::Int64);
  EXPECT_THROW_MSG(t.set({0}, 9.3e18), std::invalid_argument, "set: value");
  EXPECT_EQ(Tensor::scalar(-9223372036854775808.0, DType::Int64).item(), -9223372036854775808.0);  // -2^63 fits
}

TEST(TensorErrors, BroadcastMismatchNamesOpAndShapes) {
  EXPECT_THROW_MSG(add(Tensor::ones({2, 3}), Tensor::ones({4})), std::invalid_argument,
                   "add: shapes cannot be broadcast: a [2, 3] vs b [4]");
  EXPECT_THROW_MSG(mul(Tensor::ones({2, 3}), Tensor::ones({2})), std::invalid_argument, "mul: shapes cannot be broadcast");
}

TEST(TensorErrors, MatmulInnerDimensionsNameBothShapes) {
  EXPECT_THROW_MSG(matmul(Tensor::ones({2, 3}), Tensor::ones({4, 5})), std::invalid_argument,
                   "matmul: inner dimensions differ: a [2, 3] vs b [4, 5]");
  EXPECT_THROW_MSG(matmul(Tensor::ones({3}), Tensor::ones({4})), std::invalid_argument,
                   "matmul: inner dimensions differ: a [3] vs b [4]");
  EXPECT_THROW_MSG(matmul(Tensor::ones({2, 2, 3}), Tensor::ones({3, 3, 4})), std::invalid_argument,
                   "matmul: batch dimensions cannot be broadcast: a [2, 2, 3] vs b [3, 3, 4]");
}

TEST(TensorErrors, DtypeMismatchNamesBothDtypes) {
  EXPECT_THROW_MSG(add(Tensor::ones({2}), Tensor::ones({2}, DType::Float64)), std::invalid_argument,
                   "add: dtype mismatch: a is float32, b is float64");
  EXPECT_THROW_MSG(matmul(Tensor::ones({2, 2}, DType::Float64), Tensor::ones({2, 2})), std::invalid_argument,
                   "matmul: dtype mismatch: a is float64, b is float32");
  EXPECT_THROW_MSG(exp(Tensor::ones({2}, DType::Int64)), std::invalid_argument,
                   "exp: expected a floating tensor (float32 or float64), got int64");
  EXPECT_THROW_MSG(masked_fill(Tensor::ones({2}), Tensor::ones({2}), 0.0), std::invalid_argument,
                   "masked_fill: mask must be a bool tensor, got float32");
}

TEST(TensorErrors, DimOutOfRangeNamesDimAndRank) {
  EXPECT_THROW_MSG(softmax(Tensor::ones({2, 3}), 2), std::out_of_range, "softmax: dim 2 out of range for a tensor of rank 2");
  EXPECT_THROW_MSG(sum(Tensor::ones({2, 3}), {-3}), std::out_of_range, "sum: dim -3 out of range for a tensor of rank 2");
  EXPECT_THROW_MSG(Tensor::ones({2}).transpose(0, 1), std::out_of_range, "transpose: dim 1 out of range for a tensor of rank 1");
}

TEST(TensorErrors, IndexOutOfRangeNamesIndexAndSize) {
  Tensor table = Tensor::ones({7, 4});
  EXPECT_THROW_MSG(embedding(table, Tensor::from_vector<std::int64_t>({1, 9}, {2})), std::out_of_range,
                   "embedding: id 9 is out of range for a table of 7 rows");
  EXPECT_THROW_MSG(index_select(table, 0, Tensor::from_vector<std::int64_t>({-1}, {1})), std::out_of_range,
                   "index_select: index -1 out of range for dim 0 of size 7");
  EXPECT_THROW_MSG(cross_entropy(Tensor::ones({2, 3}), Tensor::from_vector<std::int64_t>({0, 3}, {2})),
                   std::out_of_range, "cross_entropy: target 3 at position 1 is out of range for 3 classes");
}

TEST(TensorErrors, CatAndStackNameTheOffendingTensor) {
  EXPECT_THROW_MSG(cat({Tensor::ones({2, 3}), Tensor::ones({3, 2})}, 0), std::invalid_argument,
                   "cat: tensor 1 has shape [3, 2] but tensor 0 has [2, 3]; sizes must match except in dim 0");
  EXPECT_THROW_MSG(stack({Tensor::ones({2}), Tensor::ones({3})}, 0), std::invalid_argument,
                   "stack: tensor 1 has shape [3] but tensor 0 has [2]");
}

TEST(TensorErrors, UndefinedTensorUseIsAnError) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_THROW_MSG(t.shape(), std::logic_error, "undefined tensor");
}

}  // namespace
}  // namespace cppgrad

namespace cppgrad {
namespace {

TEST(Tensor, SetDataMakesEveryHandleShowTheSourceAndRefusesANonLeaf) {
  Tensor p = Tensor::from_vector<float>({1, 2, 3}, {3});
  p.set_requires_grad(true);
  const Tensor other_handle = p;
  sum(mul(p, p)).backward();
  ASSERT_TRUE(p.grad().defined());
  const Tensor source = Tensor::from_vector<double>({4, 5}, {2});
  p.set_data(source);
  EXPECT_EQ(other_handle.to_vector<double>(), (std::vector<double>{4, 5}));  // the same impl: every handle sees it
  EXPECT_EQ(other_handle.dtype(), DType::Float64);
  EXPECT_TRUE(p.requires_grad());
  EXPECT_FALSE(p.grad().defined());  // the old gradient no longer fits
  source.set({0}, 9.0);
  EXPECT_EQ(p.at({0}), 9.0);  // shared, not copied
  EXPECT_THROW_MSG(mul(p, 2.0).set_data(source), std::logic_error, "set_data: only a leaf's data");
}

}  // namespace
}  // namespace cppgrad
