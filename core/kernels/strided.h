#pragma once
// Walking N-d strided layouts. Ops that accept any layout (views, broadcasts) iterate "rows": every index of
// the leading dims, then a tight loop over the last dim, which the compiler vectorises when its strides are 1.
#include <array>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace cppgrad::kernels {

// Calls row(base_offsets, n, inner_strides) for the rows of `shape`, in row-major order, where base_offsets[k] is
// the element offset of operand k at the row's start and the row runs n elements with inner_strides[k]. Before
// walking, dims of size 1 are dropped and neighbouring dims merged wherever every operand steps through them as
// one (outer stride = inner stride x inner size), so the rows are as long as the layouts allow: a slice of 2000
// rows of 8 floats that sit 32 floats apart in one operand and 8 in the other walks as 500 rows of 32 when the
// first is a [B, T, H, dh] cache. The visiting order of elements is the same either way.
template <std::size_t K, typename Row>
void for_each_row(const Shape& shape, const std::array<Strides, K>& strides, Row&& row) {
  for (auto d : shape)
    if (d == 0) return;
  Shape dims;                      // the coalesced shape, outermost first
  std::array<Strides, K> steps{};  // and each operand's strides for it
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merges = !dims.empty();
    for (std::size_t k = 0; k < K && merges; ++k) merges = steps[k].back() == strides[k][d] * shape[d];
    if (merges) {
      dims.back() *= shape[d];
      for (std::size_t k = 0; k < K; ++k) steps[k].back() = strides[k][d];
    } else {
      dims.push_back(shape[d]);
      for (std::size_t k = 0; k < K; ++k) steps[k].push_back(strides[k][d]);
    }
  }
  std::array<std::int64_t, K> offsets{};
  if (dims.empty()) {  // a scalar, or every dim of size 1: one element
    std::array<std::int64_t, K> ones{};
    row(offsets, std::int64_t{1}, ones);
    return;
  }
  const std::size_t rank = dims.size();
  std::array<std::int64_t, K> inner{};
  for (std::size_t k = 0; k < K; ++k) inner[k] = steps[k][rank - 1];
  const std::int64_t n = dims[rank - 1];
  Shape counter(rank, 0);  // inline up to rank 6: no allocation per call
  while (true) {
    row(offsets, n, inner);
    // Advance the odometer over dims rank-2 .. 0.
    std::int64_t d = static_cast<std::int64_t>(rank) - 2;
    for (; d >= 0; --d) {
      if (++counter[d] < dims[d]) {
        for (std::size_t k = 0; k < K; ++k) offsets[k] += steps[k][d];
        break;
      }
      for (std::size_t k = 0; k < K; ++k) offsets[k] -= steps[k][d] * (dims[d] - 1);
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
