#pragma once
#include <vector>

#include "core/tensor.h"

namespace cppgrad::optim {

// Scales every gradient by max_norm / total_norm when the global 2-norm over all of them exceeds max_norm
// (PyTorch's clip_grad_norm_, with its 1e-6 guard). Returns the total norm before clipping.
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

}  // namespace cppgrad::optim
