#include "nn/dropout.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/ops/dropout.h"

namespace cppgrad::nn {

Dropout::Dropout(double p, std::shared_ptr<Generator> gen) : p_(p), gen_(std::move(gen)) {
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument(fmt::format("Dropout: p must be in [0, 1], got {}", p));
  if (!gen_) throw std::invalid_argument("Dropout: needs a generator");
}

std::string Dropout::extra_repr() const { return fmt::format("p={:g}", p_); }

Tensor Dropout::forward(const Tensor& x) const { return dropout(x, p_, is_training(), *gen_); }

bool draws_dropout_masks(const Module& model) {
  if (const auto* d = dynamic_cast<const Dropout*>(&model); d && d->p() > 0) return true;
  for (const auto& [name, child] : model.named_children())
    if (draws_dropout_masks(*child)) return true;
  return false;
}

}  // namespace cppgrad::nn
