#pragma once
// A model's attention over one text, for every reader of it: `cppgrad-gpt attention` draws the maps as panels, the
// browser page sends them as flat floats.
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "nn/gpt.h"

namespace cppgrad::gpt {

// One forward of `ids` (from ids_to_read, gpt/prompt.h) in evaluation mode, without the graph, and every layer's
// causal attention from it: per layer [heads, T, T], row = the query position, column = the key position. The model
// is left in the mode it was in.
std::vector<Tensor> attention_over(nn::GPT& model, const std::vector<std::int64_t>& ids);

}  // namespace cppgrad::gpt
