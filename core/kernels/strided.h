#pragma once
// Walking N-d strided layouts. Ops that accept any layout (views, broadcasts) iterate "rows": every index of
// the leading dims, then a tight loop over the last dim, which the compiler vectorises when its strides are 1.
#include <array>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace cppgrad::kernels {

// Calls row(base_offsets, n, inner_strides) once per index of shape[0..rank-1), where base_offsets[k] is the
// element offset of operand k at that index and the row runs n = shape.back() elements with inner_strides[k].
template <std::size_t K, typename Row>
void for_each_row(const Shape& shape, const std::array<Strides, K>& strides, Row&& row) {
  const std::size_t rank = shape.size();
  std::array<std::int64_t, K> offsets{};
  if (rank == 0) {
    std::array<std::int64_t, K> ones{};
    row(offsets, std::int64_t{1}, ones);
    return;
  }
  for (auto d : shape)
    if (d == 0) return;
  std::array<std::int64_t, K> inner{};
  for (std::size_t k = 0; k < K; ++k) inner[k] = strides[k][rank - 1];
  const std::int64_t n = shape[rank - 1];
  Shape counter(rank, 0);  // inline up to rank 6: no allocation per call
  while (true) {
    row(offsets, n, inner);
    // Advance the odometer over dims rank-2 .. 0.
    std::int64_t d = static_cast<std::int64_t>(rank) - 2;
    for (; d >= 0; --d) {
      if (++counter[d] < shape[d]) {
        for (std::size_t k = 0; k < K; ++k) offsets[k] += strides[k][d];
        break;
      }
      for (std::size_t k = 0; k < K; ++k) offsets[k] -= strides[k][d] * (shape[d] - 1);
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

// dst (contiguous) <- src (any strides), element by element.
template <typename T>
void copy_to_contiguous(const T* src, const Shape& shape, const Strides& src_strides, T* dst) {
  std::int64_t out = 0;
  for_each_row<1>(shape, {src_strides}, [&](const std::array<std::int64_t, 1>& off, std::int64_t n,
                                            const std::array<std::int64_t, 1>& inner) {
    const T* s = src + off[0];
    if (inner[0] == 1) {
      for (std::int64_t i = 0; i < n; ++i) dst[out + i] = s[i];
    } else {
      for (std::int64_t i = 0; i < n; ++i) dst[out + i] = s[i * inner[0]];
    }
    out += n;
  });
}

}  // namespace cppgrad::kernels
