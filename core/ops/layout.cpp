#include "core/ops/layout.h"

#include <algorithm>

namespace cppgrad {

// b's dims sorted by stride give its memory order; the result is allocated in that order and permuted back.
Tensor empty_like_layout_of(const Shape& shape, const Tensor& b) {
  const std::size_t r = shape.size();
  if (b.is_contiguous() || b.dim() != static_cast<std::int64_t>(r) || b.strides().back() != 1 ||
      !std::equal(shape.begin(), shape.end() - 2, b.shape().begin()))
    return Tensor::empty(shape, b.dtype());
  Dims order(r);
  for (std::size_t i = 0; i < r; ++i) order[i] = static_cast<std::int64_t>(i);
  // Outermost first; equal strides keep their order (std::stable_sort would allocate a buffer on every call).
  std::sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
    return b.strides()[x] > b.strides()[y] || (b.strides()[x] == b.strides()[y] && x < y);
  });
  for (std::size_t i = 0; i < r; ++i) {  // dense: each stride is the product of the sizes inside it
    const std::int64_t inner = i + 1 < r ? b.strides()[order[i + 1]] * b.shape()[order[i + 1]] : 1;
    if (b.shape()[order[i]] == 1 || b.strides()[order[i]] != inner) return Tensor::empty(shape, b.dtype());
  }
  Shape physical(r);
  Dims inverse(r);
  for (std::size_t i = 0; i < r; ++i) {
    physical[i] = shape[order[i]];
    inverse[order[i]] = static_cast<std::int64_t>(i);
  }
  return Tensor::empty(physical, b.dtype()).permute(inverse);
}

}  // namespace cppgrad
