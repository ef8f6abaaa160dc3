#pragma once
// GPT-2's MLP (nanoGPT's MLP): c_fc widens to 4 n_embd, GELU in its tanh form, c_proj narrows back.
#include <memory>

#include "nn/dropout.h"
#include "nn/gpt_config.h"
#include "nn/linear.h"

namespace cppgrad::nn {

class MLP : public Module {
 public:
  MLP(const GPTConfig& config, Generator& gen, std::shared_ptr<Generator> dropout_gen);
  std::string type_name() const override { return "MLP"; }

  Tensor forward(const Tensor& x) const;  // x: [B, T, C] -> [B, T, C]

  const std::shared_ptr<Linear>& c_fc() const { return c_fc_; }
  const std::shared_ptr<Linear>& c_proj() const { return c_proj_; }  // ends a residual branch (GPT-2's init scales it)

 private:
  std::shared_ptr<Linear> c_fc_, c_proj_;
  std::shared_ptr<Dropout> dropout_;  // null when config.dropout == 0
};

}  // namespace cppgrad::nn
