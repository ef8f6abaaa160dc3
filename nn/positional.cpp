#include "nn/positional.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace cppgrad::nn {

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(std::int64_t max_len, std::int64_t d_model)
    : max_len_(max_len), d_model_(d_model), table_(Tensor::zeros({max_len, d_model}, DType::Float64)) {
  double* p = table_.mutable_data<double>();
  for (std::int64_t pos = 0; pos < max_len; ++pos)
    for (std::int64_t i = 0; i < d_model; ++i) {
      const double angle = pos / std::pow(10000.0, static_cast<double>(i - i % 2) / d_model);
      p[pos * d_model + i] = i % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
}

std::string SinusoidalPositionalEncoding::extra_repr() const { return fmt::format("max_len={}, d={}", max_len_, d_model_); }

Tensor SinusoidalPositionalEncoding::forward(std::int64_t L) const {
  if (L > max_len_)
    throw std::invalid_argument(fmt::format("SinusoidalPositionalEncoding: length {} exceeds max_len {}", L, max_len_));
  return table_.slice(0, 0, L);
}

}  // namespace cppgrad::nn
