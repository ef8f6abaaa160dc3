#pragma once
// LoRA (Hu et al., 2021, "Low-Rank Adaptation of Large Language Models"): a frozen Linear y = x W^T + b learns a
// low-rank change instead of a new W:
//
//   y = x W^T + b + (alpha / r) * dropout(x) A^T B^T        W [out, in] frozen;  A [r, in], B [out, r] trained
//
// B starts at zero, so the adapted model starts as the base model; A starts as nn.Linear's weight would (PyTorch
// peft's kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(in), 1/sqrt(in))). Backward computes no gradient for W: for a
// [rows, in] -> [rows, out] layer it runs the input's product (rows x in x out, if the input needs a gradient) and
// four rank-r ones, where training W runs a weight-gradient product of rows x in x out too. AdamW then keeps
// r (in + out) numbers a layer instead of in x out.
//
// Merging folds the change into the weight: W' = W + (alpha / r) B A, a plain Linear with the same outputs (up to
// float rounding). Linear::add_lora attaches one (nn/linear.h); merged_state_dict gives a plain model's weights.
#include <memory>
#include <string>
#include <vector>

#include "core/generator.h"
#include "nn/dropout.h"
#include "nn/module.h"

namespace cppgrad::nn {

// PyTorch peft's LoraConfig names and defaults: r, lora_alpha, lora_dropout.
struct LoRAOptions {
  std::int64_t rank = 8;
  double alpha = 8.0;    // the change is scaled by alpha / rank
  double dropout = 0.0;  // on the adapter's input only
};

// The change alone, for a Linear [out, in]: x [.., in] -> (alpha / r) dropout(x) A^T B^T [.., out]. Its parameters
// are named A and B (the paper's), so a GPT's read "transformer.h.0.attn.c_attn.lora.A".
class LoRA : public Layer {
 public:
  // dropout_gen: the model's dropout generator, needed when options.dropout > 0.
  LoRA(std::int64_t in, std::int64_t out, const LoRAOptions& options, Generator& gen,
       std::shared_ptr<Generator> dropout_gen = nullptr);
  std::string type_name() const override { return "LoRA"; }
  std::string extra_repr() const override;

  Tensor forward(const Tensor& x) const override;
  // x W^T + b plus this change, for the Linear that holds it: one op (linear_lora, core/ops/matmul.h), which keeps
  // none of the [.., out] tensors the sum of the two would keep for backward.
  Tensor forward_with(const Tensor& x, const Tensor& weight, const Tensor& bias) const;
  // (alpha / r) B A [out, in], without a graph: what merging adds to the weight.
  Tensor weight_delta() const;

  const Tensor& A() const { return a_; }  // [r, in]
  const Tensor& B() const { return b_; }  // [out, r]
  double scaling() const { return scaling_; }
  const LoRAOptions& options() const { return options_; }

 private:
  LoRAOptions options_;
  double scaling_;
  Tensor a_, b_;
  std::shared_ptr<Dropout> dropout_;  // null when options.dropout == 0
};

// Adapts a model for LoRA finetuning, as PyTorch peft's get_peft_model does: freezes every parameter, then adds a LoRA
// to each Linear whose dotted name is a target or ends in "." + a target ("c_attn" adapts every block's
// "transformer.h.<i>.attn.c_attn"; "attn.c_proj" only the attention's c_proj). Returns the adapted layers' names.
// Throws std::invalid_argument naming a target that matches no Linear, and the Linear names there are.
std::vector<std::string> add_lora(Module& model, const std::vector<std::string>& targets, const LoRAOptions& options,
                                  Generator& gen, std::shared_ptr<Generator> dropout_gen = nullptr);

// The dotted names of the Linears under `model` that hold a LoRA, depth first.
std::vector<std::string> lora_layers(const Module& model);

// The state dict of the same model without its adapters: every Linear that has a LoRA gets W + (alpha / r) B A as
// its weight, and the adapters' entries are left out. It loads into the model built without add_lora.
StateDict merged_state_dict(const Module& model);

}  // namespace cppgrad::nn
