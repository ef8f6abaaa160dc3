#pragma once
#include "core/generator.h"
#include "nn/module.h"

namespace cppgrad::nn {

// A lookup table: ids [..] (int64 in [0, num)) -> rows [.., dim]. Init N(0, 1), as nn.Embedding.
// Also the learned positional embedding (a table over positions 0..max_len-1).
class Embedding : public Layer {
 public:
  Embedding(std::int64_t num, std::int64_t dim, Generator& gen);
  std::string type_name() const override { return "Embedding"; }
  std::string extra_repr() const override;

  Tensor forward(const Tensor& ids) const override;  // ids: [..] -> [.., dim]
  const Tensor& weight() const { return weight_; }
  std::int64_t num() const { return num_; }

 private:
  std::int64_t num_, dim_;
  Tensor weight_;
};

}  // namespace cppgrad::nn
