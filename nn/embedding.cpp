#include "nn/embedding.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/ops/select.h"
#include "nn/init.h"

namespace cppgrad::nn {

Embedding::Embedding(std::int64_t num, std::int64_t dim, Generator& gen) : num_(num), dim_(dim) {
  if (num <= 0 || dim <= 0)
    throw std::invalid_argument(fmt::format("Embedding: num and dim must be positive, got num={}, dim={}", num, dim));
  weight_ = register_parameter("weight", init::normal({num, dim}, gen));
}

std::string Embedding::extra_repr() const { return fmt::format("num={}, dim={}", num_, dim_); }

// The range check (naming the id and the table size) lives in the embedding op.
Tensor Embedding::forward(const Tensor& ids) const { return embedding(weight_, ids); }

}  // namespace cppgrad::nn
