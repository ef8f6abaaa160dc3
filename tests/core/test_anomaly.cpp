// Anomaly mode: NaN/Inf in a forward result or a gradient stops with the op, the user's line that created it,
// and what went in; legitimate -inf masking is not an anomaly; off by default.
#include <cmath>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "nn/seq2seq.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(Anomaly, LogOfANegativeNumberIsCaughtInForwardWithTheUsersLine) {
  Tensor x = Tensor::from_vector<double>({1, -2, 3}, {3});
  x.set_requires_grad(true);
  DetectAnomalyGuard guard;
  const int line = __LINE__ + 2;
  try {
    Tensor y = log(x);
    FAIL() << "expected an AnomalyError";
  } catch (const AnomalyError& e) {
    const std::string m = e.what();
    EXPECT_THAT(m, ::testing::HasSubstr("forward of 'log'"));
    EXPECT_THAT(m, ::testing::HasSubstr("test_anomaly.cpp:" + std::to_string(line)));
    EXPECT_THAT(m, ::testing::HasSubstr("1 NaN"));
    EXPECT_THAT(m, ::testing::HasSubstr("input 0: [3] float64 min -2"));
  }
}

TEST(Anomaly, AnOverflowingGradientIsCaughtInBackwardNamingTheForwardOp) {
  Tensor x = Tensor::from_vector<double>({0, 4}, {2});  // d sqrt(x)/dx = 1 / (2 sqrt x) is infinite at 0
  x.set_requires_grad(true);
  DetectAnomalyGuard guard;
  const int line = __LINE__ + 1;
  Tensor y = sum(sqrt(x));  // forward is finite: sqrt(0) = 0
  try {
    y.backward();
    FAIL() << "expected an AnomalyError";
  } catch (const AnomalyError& e) {
    const std::string m = e.what();
    EXPECT_THAT(m, ::testing::HasSubstr("backward of 'sqrt'"));
    EXPECT_THAT(m, ::testing::HasSubstr("test_anomaly.cpp:" + std::to_string(line)));
    EXPECT_THAT(m, ::testing::HasSubstr("1 infinite"));
  }
}

TEST(Anomaly, MaskingWithMinusInfinityIsNotAnAnomaly) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2});
  x.set_requires_grad(true);
  Tensor mask = Tensor::from_vector<bool>({true, false, true, true}, {2, 2});
  DetectAnomalyGuard guard;
  Tensor a = softmax(masked_fill(x, mask.to(DType::Bool), -INFINITY), -1);
  Tensor b = softmax(where(mask, x, Tensor::full({}, -INFINITY, DType::Float64)), -1);
  sum(mul(a, b)).backward();
  SUCCEED();
}

TEST(Anomaly, AWholeTransformerStepRunsCleanUnderTheGuard) {
  Generator gen(1);
  nn::Seq2SeqTransformer model({.d_model = 16, .n_heads = 2, .d_ff = 16, .max_len = 8}, gen);
  Tensor src = Tensor::randint(1, 10, {4, 6}, gen), dec = Tensor::randint(1, 11, {4, 6}, gen);
  DetectAnomalyGuard guard;
  cross_entropy(model.forward(src, dec), Tensor::randint(1, 10, {4, 6}, gen)).backward();
  SUCCEED();
}

TEST(Anomaly, OffByDefaultAndTheGuardRestores) {
  EXPECT_FALSE(anomaly_detection_enabled());
  {
    DetectAnomalyGuard guard;
    EXPECT_TRUE(anomaly_detection_enabled());
  }
  EXPECT_FALSE(anomaly_detection_enabled());
  Tensor y = log(Tensor::from_vector<double>({-1}, {1}));  // NaN, silently, as PyTorch
  EXPECT_TRUE(std::isnan(y.item()));
}

}  // namespace
}  // namespace cppgrad
