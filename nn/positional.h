#pragma once
#include "nn/module.h"

namespace cppgrad::nn {

// The fixed sinusoidal position code of "Attention Is All You Need" (no parameters):
//   pe[pos, 2i] = sin(pos / 10000^(2i/d)),  pe[pos, 2i+1] = cos(pos / 10000^(2i/d))
// The learned alternative is an Embedding over positions (see Seq2SeqTransformer's src_pos / tgt_pos).
class SinusoidalPositionalEncoding : public Module {
 public:
  SinusoidalPositionalEncoding(std::int64_t max_len, std::int64_t d_model);
  std::string type_name() const override { return "SinusoidalPositionalEncoding"; }
  std::string extra_repr() const override;

  // The first L rows of the table: [L, d_model] (dtype float32; convert with .to() for float64 models).
  Tensor forward(std::int64_t L) const;

 private:
  std::int64_t max_len_, d_model_;
  Tensor table_;  // [max_len, d_model], a constant
};

}  // namespace cppgrad::nn
