// Inverted dropout: in training each element is kept with probability 1-p and scaled by 1/(1-p), so the
// expected value is unchanged and evaluation needs no rescaling. The mask comes from the caller's Generator.
#include <stdexcept>

#include "core/autograd.h"
#include "core/generator.h"
#include "core/ops/dropout.h"
#include "core/ops/elementwise.h"

namespace cppgrad {

// x: (..) -> (..);  dx = g * mask / (1-p)
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen, std::source_location where) {
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("dropout: p must be in [0, 1], got " + std::to_string(p));
  if (!training || p == 0.0) return x;
  // scale = 0 when p == 1: everything is dropped.
  const double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  Tensor keep = Tensor::empty(x.shape(), x.dtype());  // holds mask * scale, reused by backward
  dispatch_floating(x.dtype(), "dropout", [&](auto tag) {
    using T = decltype(tag);
    T* pk = keep.mutable_data<T>();
    for (std::int64_t i = 0; i < keep.numel(); ++i) pk[i] = gen.uniform() >= p ? static_cast<T>(scale) : T(0);
  });
  Tensor out = mul(x.detach(), keep);
  return record_op(out, "dropout", {x}, [keep](const Tensor& g) { return TensorList{mul(g, keep)}; }, where);
}

}  // namespace cppgrad
