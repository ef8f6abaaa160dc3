#include "core/kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/kernels/exp.h"
#include "core/kernels/simd.h"

namespace cppgrad::kernels {

// (Cross-entropy below keeps rows of its own: on its 10-class rows this loop measured 2.5x slower than a scalar one.)
// Float rows run in chunks of 8 lanes, one kernels::f32x8 value each, the last chunk padded with -inf (weight
// 0): every loop has a compile-time width and becomes a few vector instructions, with no loop set-up or scalar
// remainder, which matters for attention's rows of 8 keys (1 to 9 while decoding). The sums are taken lane by
// lane and then across lanes in a fixed order, so results are reproducible.
void softmax_row_f32x8(const float* xi, float* yi, std::int64_t n) {
  constexpr float minus_inf = -std::numeric_limits<float>::infinity();
  const std::int64_t full = n / 8, rest = n % 8, chunks = full + (rest ? 1 : 0);
  auto load = [&](std::int64_t c) {
    f32x8 v;
    if (c < full) {
      std::memcpy(&v, xi + c * 8, sizeof v);
    } else {
      float lanes[8];
      for (std::int64_t e = 0; e < 8; ++e) lanes[e] = e < rest ? xi[c * 8 + e] : minus_inf;
      std::memcpy(&v, lanes, sizeof v);
    }
    return v;
  };
  f32x8 chunk_max = f32x8{} + minus_inf;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const f32x8 v = load(c);
    chunk_max = v > chunk_max ? v : chunk_max;
  }
  float m = minus_inf;
  for (int e = 0; e < 8; ++e) m = chunk_max[e] > m ? chunk_max[e] : m;
  if (m == minus_inf) {  // every entry masked: no distribution, all zeros
    for (std::int64_t j = 0; j < n; ++j) yi[j] = 0;
    return;
  }
  f32x8 sums{};
  for (std::int64_t c = 0; c < chunks; ++c) {
    const f32x8 v = load(c);
    const f32x8 ev = exp_f32x8(v - m);
    const f32x8 w = v == minus_inf ? f32x8{} : ev;  // masked entries: exactly 0
    sums += w;
    if (c < full) {
      std::memcpy(yi + c * 8, &w, sizeof w);
    } else {
      float lanes[8];
      std::memcpy(lanes, &w, sizeof w);
      for (std::int64_t e = 0; e < rest; ++e) yi[c * 8 + e] = lanes[e];
    }
  }
  const float total = lane_total(sums);
  const float inv = 1.0f / total;
  for (std::int64_t j = 0; j < n; ++j) yi[j] *= inv;
}

namespace {

// The rows' softmax into pp and the sum of -log p[t] over the counted rows; pp may be px itself (each entry is read
// before it is written, the target's logit first of all).
double cross_entropy_rows(const float* px, float* pp, const std::int64_t* pt, std::int64_t N, std::int64_t C,
                          std::int64_t ignore_index) {
  double total = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    const float* xi = px + i * C;
    const bool counted = pt[i] != ignore_index;
    const float x_target = counted ? xi[pt[i]] : 0.0f;
    float m = -std::numeric_limits<float>::infinity();
    for (std::int64_t j = 0; j < C; ++j) m = xi[j] > m ? xi[j] : m;
    // e^(x - m) eight classes at a time on the vectorised exp (the GPT's rows of 64-70 classes; libm's expf, a call
    // per class, was most of this loop), the sum lane by lane and then across lanes in a fixed order
    float* pi = pp + i * C;
    f32x8 sums{};
    std::int64_t j = 0;
    constexpr float minus_inf = -std::numeric_limits<float>::infinity();  // a logit of -inf: exactly 0, as libm's
    for (; j + 8 <= C; j += 8) {
      const f32x8 x = load8(xi + j), e = x == minus_inf ? f32x8{} : exp_f32x8(x - m);
      store8(pi + j, e);
      sums += e;
    }
    float s = lane_total(sums);
    for (; j < C; ++j) s += (pi[j] = xi[j] == minus_inf ? 0.0f : exp_float(xi[j] - m));
    for (j = 0; j < C; ++j) pi[j] /= s;
    // -log p[t] = log-sum-exp - x[t], taken in this form so that a tiny probability does not round to log 0
    if (counted) total += static_cast<double>(m + std::log(s) - x_target);
  }
  return total;
}

// The mean over no target is 0 / 0: NaN, as PyTorch gives (its gradient is zero: no target pulls on x).
Tensor mean_loss(double total, std::int64_t valid) {
  return Tensor::scalar(valid == 0 ? std::nan("") : total / static_cast<double>(valid), DType::Float32);
}

}  // namespace

Tensor cross_entropy_forward(const Tensor& logits, const Tensor& target, std::int64_t ignore_index, std::int64_t valid,
                             Tensor& probs) {
  const std::int64_t N = logits.shape()[0], C = logits.shape()[1];
  probs = Tensor::empty({N, C}, DType::Float32);
  const double total = cross_entropy_rows(logits.data<float>(), probs.mutable_data<float>(),
                                          target.data<std::int64_t>(), N, C, ignore_index);
  return mean_loss(total, valid);
}

Tensor cross_entropy_forward_in_place(const Tensor& logits, const Tensor& target, std::int64_t ignore_index,
                                      std::int64_t valid) {
  const std::int64_t N = logits.shape()[0], C = logits.shape()[1];
  float* p = logits.mutable_data<float>();
  return mean_loss(cross_entropy_rows(p, p, target.data<std::int64_t>(), N, C, ignore_index), valid);
}

namespace {

// dx = scale * (p - onehot(t)) row by row, zero on ignored rows; dx may be p itself (each entry is read before it is
// written, and only by its own write).
void write_cross_entropy_gradient(const Tensor& g, const Tensor& probs, const Tensor& target, std::int64_t ignore_index,
                                  std::int64_t valid, float* dx) {
  const std::int64_t N = probs.shape()[0], C = probs.shape()[1];
  const float scale = valid == 0 ? 0.0f : static_cast<float>(g.item() / static_cast<double>(valid));
  const float* pp = probs.data<float>();
  const std::int64_t* pt = target.data<std::int64_t>();
  for (std::int64_t i = 0; i < N; ++i) {
    float* row = dx + i * C;
    if (valid == 0 || pt[i] == ignore_index) {
      std::fill(row, row + C, 0.0f);
      continue;
    }
    for (std::int64_t j = 0; j < C; ++j) row[j] = scale * pp[i * C + j];
    row[pt[i]] -= scale;
  }
}

}  // namespace

Tensor cross_entropy_backward(const Tensor& g, const Tensor& probs, const Tensor& target, std::int64_t ignore_index,
                              std::int64_t valid) {
  Tensor dx = Tensor::empty(probs.shape(), DType::Float32);
  write_cross_entropy_gradient(g, probs, target, ignore_index, valid, dx.mutable_data<float>());
  return dx;
}

Tensor cross_entropy_backward_over_probs(const Tensor& g, const Tensor& probs, const Tensor& target,
                                         std::int64_t ignore_index, std::int64_t valid) {
  write_cross_entropy_gradient(g, probs, target, ignore_index, valid, probs.mutable_data<float>());
  return probs;
}

}  // namespace cppgrad::kernels
