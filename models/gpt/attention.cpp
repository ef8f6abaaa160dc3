#include "models/gpt/attention.h"

#include <algorithm>

#include "core/autograd.h"

namespace cppgrad::gpt {

std::vector<Tensor> attention_over(nn::GPT& model, const std::vector<std::int64_t>& ids) {
  {
    NoGradGuard no_grad;
    model.eval();  // dropout off: the maps a checkpoint gives
    Tensor idx = Tensor::zeros({1, std::ssize(ids)}, DType::Int64);  // [1, T]
    std::copy(ids.begin(), ids.end(), idx.data<std::int64_t>());
    model.forward(idx);
  }
  std::vector<Tensor> maps;
  for (const Tensor& m : model.attention_maps()) maps.push_back(m.select(0, 0));  // [1, heads, T, T] -> [heads, T, T]
  return maps;
}

}  // namespace cppgrad::gpt
