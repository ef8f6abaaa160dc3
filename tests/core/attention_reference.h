#pragma once
// The plain loops the raw attention kernels (core/kernels/attention.h) are tested against, head by head: the
// formulas of that header written out. (The library's readable definition is the op's, core/ops/attention.cpp.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/kernels/attention.h"

namespace cppgrad::test {

using kernels::AttentionDims;
using kernels::AttentionGrads;
using kernels::AttentionHead;

template <typename T>
bool allowed(const AttentionHead<T>& h, std::int64_t i, std::int64_t j) {
  return h.mask == nullptr || h.mask[i * h.mask_rs + j * h.mask_cs];
}

template <typename T>
T dot(const T* a, const T* b, std::int64_t n) {
  T acc = 0;
  for (std::int64_t e = 0; e < n; ++e) acc += a[e] * b[e];
  return acc;
}

template <typename T>
inline void attention_forward_reference(const AttentionDims& d, const AttentionHead<T>& h, T* weights, T* out,
                                 std::int64_t out_rs) {
  constexpr T minus_inf = -std::numeric_limits<T>::infinity();
  const T scale = static_cast<T>(d.scale);
  for (std::int64_t i = 0; i < d.Lq; ++i) {
    T* p = weights + i * d.Lk;  // scores first, then (in place) the weights
    T m = minus_inf;
    for (std::int64_t j = 0; j < d.Lk; ++j) {
      p[j] = allowed(h, i, j) ? dot(h.q + i * h.q_rs, h.k + j * h.k_rs, d.dk) * scale : minus_inf;
      m = std::max(m, p[j]);
    }
    T total = 0;
    for (std::int64_t j = 0; j < d.Lk; ++j) total += (p[j] = p[j] == minus_inf ? T(0) : std::exp(p[j] - m));
    for (std::int64_t j = 0; j < d.Lk; ++j) p[j] = m == minus_inf ? T(0) : p[j] / total;  // all blocked: zeros
    T* o = out + i * out_rs;
    for (std::int64_t e = 0; e < d.dv; ++e) {
      T acc = 0;
      for (std::int64_t j = 0; j < d.Lk; ++j) acc += p[j] * h.v[j * h.v_rs + e];
      o[e] = acc;
    }
  }
}

template <typename T>
inline void attention_backward_reference(const AttentionDims& d, const AttentionHead<T>& h, const T* weights,
                                  const AttentionGrads<T>& g) {
  const T scale = static_cast<T>(d.scale);
  for (std::int64_t j = 0; j < d.Lk; ++j) {
    std::fill(g.dk + j * g.dk_rs, g.dk + j * g.dk_rs + d.dk, T(0));
    std::fill(g.dv + j * g.dv_rs, g.dv + j * g.dv_rs + d.dv, T(0));
  }
  std::vector<T> ds_buffer(static_cast<std::size_t>(d.Lk));
  T* ds = ds_buffer.data();
  for (std::int64_t i = 0; i < d.Lq; ++i) {
    const T* p = weights + i * d.Lk;
    const T* dout = g.dout + i * g.dout_rs;
    // dP[i, j] = dO[i] . V[j];  dS[i, j] = P[i, j] (dP[i, j] - sum_j' P[i, j'] dP[i, j'])
    T row_dot = 0;
    for (std::int64_t j = 0; j < d.Lk; ++j) row_dot += p[j] * (ds[j] = dot(dout, h.v + j * h.v_rs, d.dv));
    for (std::int64_t j = 0; j < d.Lk; ++j) ds[j] = p[j] * (ds[j] - row_dot) * scale;
    T* dq = g.dq + i * g.dq_rs;
    for (std::int64_t e = 0; e < d.dk; ++e) {
      T acc = 0;
      for (std::int64_t j = 0; j < d.Lk; ++j) acc += ds[j] * h.k[j * h.k_rs + e];
      dq[e] = acc;
    }
    for (std::int64_t j = 0; j < d.Lk; ++j) {
      for (std::int64_t e = 0; e < d.dk; ++e) g.dk[j * g.dk_rs + e] += ds[j] * h.q[i * h.q_rs + e];
      for (std::int64_t e = 0; e < d.dv; ++e) g.dv[j * g.dv_rs + e] += p[j] * dout[e];
    }
  }
}

}  // namespace cppgrad::test
