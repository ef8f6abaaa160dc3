// Stop 5 (docs/learn.md): scaled dot-product attention and the causal mask. Read nn/attention.h and attention.cpp.
//
// Question: with q = k = 0 every score is equal; what weights does the causal mask leave? Row t spreads evenly over
// positions 0..t: [1], [1/2, 1/2], [1/3, 1/3, 1/3].
// Exercise: compute those weights with scaled_dot_product_attention and causal_mask, and show that changing the
// last position's value leaves every earlier output alone (no position reads the future).
#include <vector>

#include "learn.h"

namespace cppgrad::learn {
namespace {

// q, k, v: [1, T, d] -> output [1, T, d], weights [1, T, T]
nn::AttentionResult causal_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const std::int64_t T = q.shape()[1];
  if constexpr (kPlantedWrong) return nn::scaled_dot_product_attention(q, k, v);  // the mistake: no mask
  return nn::scaled_dot_product_attention(q, k, v, nn::causal_mask(T));
}

TEST(Stop5, EqualScoresSpreadEvenlyOverThePast) {
  const Tensor zeros = Tensor::zeros({1, 3, 2}, DType::Float64);
  Generator gen(0);
  const Tensor v = Tensor::randn({1, 3, 2}, gen, DType::Float64);
  const std::vector<double> w = causal_attention(zeros, zeros, v).weights.to_vector<double>();
  const std::vector<double> want{1, 0, 0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(w[i], want[i], 1e-15) << "weight " << i;
}

TEST(Stop5, NoPositionReadsTheFuture) {
  Generator gen(1);
  const Tensor q = Tensor::randn({1, 4, 2}, gen, DType::Float64), k = Tensor::randn({1, 4, 2}, gen, DType::Float64);
  const Tensor v = Tensor::randn({1, 4, 2}, gen, DType::Float64);
  const Tensor v2 = v.clone();
  v2.slice(1, 3, 4).copy_(Tensor::full({1, 1, 2}, 100.0, DType::Float64));  // a different last value
  const Tensor a = causal_attention(q, k, v).output, b = causal_attention(q, k, v2).output;
  EXPECT_EQ(a.slice(1, 0, 3).to_vector<double>(), b.slice(1, 0, 3).to_vector<double>());  // positions 0..2 agree
  EXPECT_NE(a.slice(1, 3, 4).to_vector<double>(), b.slice(1, 3, 4).to_vector<double>());  // position 3 reads it
}

}  // namespace
}  // namespace cppgrad::learn
