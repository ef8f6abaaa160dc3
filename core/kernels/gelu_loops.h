#pragma once
// The GELU loops of core/kernels/gelu.h, written once over the vector type V (8 or 16 floats). Two translation units
// include this header: gelu.cpp (8 lanes, the build's AVX2) and gelu_avx512.cpp (16 lanes, inside an AVX-512 target
// region). Everything here has internal linkage, as in gemm_tiled.h, so the two compilations never mix.
#include <cstdint>
#include <cstring>
#include <numbers>

#include "core/kernels/exp.h"

namespace cppgrad::kernels {
namespace {  // NOLINT(google-build-namespaces): internal on purpose, see above

constexpr float kGeluC = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi), kGeluA = 0.044715f;

// e = e^(-2u) for x; then s = (1 + tanh u) / 2 = sigmoid(2u) = 1 / (1 + e) and 1 - s = e s (F is float or a float
// vector: every step is lane-wise). 1 - s taken as e s has no cancellation where s is near 1.
template <typename F>
[[gnu::always_inline]] inline F gelu_exp(F x) {
  return detail::exp_cephes(-2.0f * (kGeluC * (x + kGeluA * x * x * x)));
}

template <typename F>
[[gnu::always_inline]] inline F gelu_value(F x) {
  return x * (1.0f / (1.0f + gelu_exp(x)));
}

// 1 - tanh^2 u = 4 s (1 - s), so dx = g (s + 2 x s (1 - s) c (1 + 3 a x^2))
template <typename F>
[[gnu::always_inline]] inline F gelu_grad(F g, F x) {
  const F e = gelu_exp(x), s = 1.0f / (1.0f + e);
  return g * (s + 2.0f * x * s * (e * s) * kGeluC * (1.0f + 3.0f * kGeluA * x * x));
}

template <typename V>
[[gnu::always_inline]] inline V load_lanes(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename V>
[[gnu::always_inline]] inline void store_lanes(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// y[i] = gelu(x[i]), whole vectors and then a scalar tail
template <typename V>
void gelu_forward_loop(const float* x, float* y, std::int64_t n) {
  constexpr std::int64_t W = sizeof(V) / sizeof(float);
  std::int64_t i = 0;
  for (; i + W <= n; i += W) store_lanes(y + i, gelu_value(load_lanes<V>(x + i)));
  for (; i < n; ++i) y[i] = gelu_value(x[i]);
}

// dx[i] = g[i] gelu'(x[i])
template <typename V>
void gelu_backward_loop(const float* g, const float* x, float* dx, std::int64_t n) {
  constexpr std::int64_t W = sizeof(V) / sizeof(float);
  std::int64_t i = 0;
  for (; i + W <= n; i += W) store_lanes(dx + i, gelu_grad(load_lanes<V>(g + i), load_lanes<V>(x + i)));
  for (; i < n; ++i) dx[i] = gelu_grad(g[i], x[i]);
}

}  // namespace
}  // namespace cppgrad::kernels
