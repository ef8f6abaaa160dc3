#pragma once
// A model's attention over one text as pictures: what `cppgrad-gpt attention` draws. Every layer's and head's causal
// map (gpt/attention.h's attention_over) as an SVG panel, and the last layer's maps averaged over its heads for the
// terminal's heatmap, with each position's token as the axes' labels.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/tokenizer.h"
#include "nn/gpt.h"
#include "train/plot/attention_maps.h"

namespace cppgrad::gpt {

struct AttentionPanels {
  std::vector<std::string> labels;              // [T]: each position's token (data::token_label)
  std::vector<train::AttentionPanel> panels;    // layers x heads, "layer L head H", each [T][T]
  std::vector<std::vector<double>> mean_last;   // [T][T]: the last layer's maps, the mean over its heads
  std::size_t layers = 0;
};

// maps: per layer [heads, T, T] (attention_over's); labels left empty.
AttentionPanels panels_of(const std::vector<Tensor>& maps, std::size_t T);

// ids: what the model reads (gpt/prompt.h's ids_to_read), at most its context. The model's mode is left as it was.
AttentionPanels attention_panels(nn::GPT& model, const data::Tokenizer& tokenizer,
                                 const std::vector<std::int64_t>& ids);

}  // namespace cppgrad::gpt
