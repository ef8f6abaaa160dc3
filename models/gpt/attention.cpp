#include "models/gpt/attention.h"

#include <algorithm>

#include "core/autograd.h"

namespace cppgrad::gpt {

std::vector<Tensor> attention_over(nn::GPT& model, const std::vector<std::int64_t>& ids) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);  // dropout off: the maps a checkpoint gives; the model's mode is back after
  Tensor idx = Tensor::zeros({1, std::ssize(ids)}, DType::Int64);  // [1, T]
  std::copy(ids.begin(), ids.end(), idx.mutable_data<std::int64_t>());
  std::vector<Tensor> maps;
  for (const Tensor& m : model.attention(idx)) maps.push_back(m.select(0, 0));  // [1, heads, T, T] -> [heads, T, T]
  return maps;
}

}  // namespace cppgrad::gpt
