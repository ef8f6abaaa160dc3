#include "core/kernels/layout.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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

std::vector<std::int64_t> gather_offsets(const Shape& x_shape, std::int64_t d, const Tensor& index, const char* op) {
  const Tensor idx = index.detach().contiguous();
  const Strides xs = contiguous_strides(x_shape);
  const std::int64_t S = x_shape[d];
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(idx.numel()));
  const std::int64_t* pi = idx.data<std::int64_t>();
  const Shape& is = idx.shape();
  std::vector<std::int64_t> counter(is.size(), 0);
  for (std::int64_t e = 0; e < idx.numel(); ++e) {
    if (pi[e] < 0 || pi[e] >= S)
      throw std::out_of_range(std::string(op) + ": index " + std::to_string(pi[e]) + " out of range for dim " +
                              std::to_string(d) + " of size " + std::to_string(S));
    std::int64_t off = 0;
    for (std::size_t k = 0; k < is.size(); ++k) off += (static_cast<std::int64_t>(k) == d ? pi[e] : counter[k]) * xs[k];
    offsets[static_cast<std::size_t>(e)] = off;
    for (std::size_t k = is.size(); k-- > 0;) {
      if (++counter[k] < is[k]) break;
      counter[k] = 0;
    }
  }
  return offsets;
}

}  // namespace cppgrad
