// Comparisons with a number: x: (..) -> bool (..). Masks are constants to autograd (nothing is recorded); they
// feed where and masked_fill, whose backward is differentiable again.
#include "core/kernels/elementwise_loops.h"
#include "core/ops/compare.h"

namespace cppgrad {

namespace {

template <typename Compare>
Tensor compare(const Tensor& x, double s, Compare c) {
  return dispatch_all(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const Tensor xc = x.detach().contiguous();
    return kernels::map_binary<T, bool>(xc, xc, x.shape(), [s, c](T v, T) { return c(static_cast<double>(v), s); });
  });
}

}  // namespace

Tensor eq(const Tensor& x, double s) { return compare(x, s, [](double v, double t) { return v == t; }); }
Tensor ne(const Tensor& x, double s) { return compare(x, s, [](double v, double t) { return v != t; }); }
Tensor lt(const Tensor& x, double s) { return compare(x, s, [](double v, double t) { return v < t; }); }
Tensor le(const Tensor& x, double s) { return compare(x, s, [](double v, double t) { return v <= t; }); }
Tensor gt(const Tensor& x, double s) { return compare(x, s, [](double v, double t) { return v > t; }); }
Tensor ge(const Tensor& x, double s) { return compare(x, s, [](double v, double t) { return v >= t; }); }

}  // namespace cppgrad
