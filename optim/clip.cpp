#include "optim/clip.h"

#include <cmath>

#include "core/autograd.h"
#include "core/ops/reduce.h"

namespace cppgrad::optim {

double grad_norm(const std::vector<Tensor>& params) {
  double sum_sq = 0;
  for (const Tensor& p : params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    sum_sq += squared_norm(g);
  }
  return std::sqrt(sum_sq);
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  const double total = grad_norm(params);
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1) {
    for (const Tensor& p : params) {
      const Tensor g = p.grad();
      if (!g.defined()) continue;
      dispatch_floating(g.dtype(), "clip_grad_norm", [&](auto tag) {
        using T = decltype(tag);
        Tensor c = g.contiguous();
        T* d = c.mutable_data<T>();
        for (std::int64_t i = 0; i < c.numel(); ++i) d[i] *= static_cast<T>(coef);
        if (!c.same(g)) g.copy_(c);
      });
    }
  }
  return total;
}

}  // namespace cppgrad::optim
