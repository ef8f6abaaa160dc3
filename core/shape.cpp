#include "core/shape.h"

#include <algorithm>
#include <stdexcept>

namespace cppgrad {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::int64_t numel_of(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      throw std::length_error("shape " + shape_str(shape) + " has more elements than int64 can count");
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides st(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    st[i] = s;
    s *= shape[i];
  }
  return st;
}

std::int64_t normalize_dim(std::int64_t dim, std::int64_t rank, const char* op) {
  const std::int64_t lo = rank == 0 ? -1 : -rank, hi = rank == 0 ? 0 : rank - 1;
  if (dim < lo || dim > hi)
    throw std::out_of_range(std::string(op) + ": dim " + std::to_string(dim) + " out of range for a tensor of rank " +
                            std::to_string(rank) + " (expected " + std::to_string(lo) + " to " + std::to_string(hi) +
                            ")");
  return dim < 0 ? dim + (rank == 0 ? 1 : rank) : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument(std::string(op) + ": shapes cannot be broadcast: a " + shape_str(a) + " vs b " +
                                  shape_str(b) + " (dim " + std::to_string(i) + ": " + std::to_string(da) + " vs " +
                                  std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& target) {
  Strides out(target.size(), 0);
  const std::size_t lead = target.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i) out[lead + i] = shape[i] == 1 ? 0 : strides[i];
  return out;
}

}  // namespace cppgrad
