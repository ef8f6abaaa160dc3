#include "models/gpt/attention_panels.h"

#include <fmt/format.h>

#include "data/token_labels.h"
#include "models/gpt/attention.h"

namespace cppgrad::gpt {

AttentionPanels panels_of(const std::vector<Tensor>& maps, std::size_t T) {
  AttentionPanels out;
  out.mean_last.assign(T, std::vector<double>(T, 0.0));
  out.layers = maps.size();
  for (std::size_t layer = 0; layer < maps.size(); ++layer) {
    const Tensor& w = maps[layer];
    const std::int64_t H = w.shape()[0];
    for (std::int64_t h = 0; h < H; ++h) {
      train::AttentionPanel p{fmt::format("layer {} head {}", layer, h), {}};
      for (std::size_t i = 0; i < T; ++i) {
        p.weights.emplace_back();
        for (std::size_t j = 0; j < T; ++j) {
          const double v = w.at({h, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)});
          p.weights.back().push_back(v);
          if (layer + 1 == maps.size()) out.mean_last[i][j] += v / static_cast<double>(H);
        }
      }
      out.panels.push_back(std::move(p));
    }
  }
  return out;
}

AttentionPanels attention_panels(nn::GPT& model, const data::Tokenizer& tokenizer,
                                 const std::vector<std::int64_t>& ids) {
  AttentionPanels out = panels_of(attention_over(model, ids), ids.size());
  for (const std::int64_t id : ids) out.labels.push_back(data::token_label(tokenizer, id));
  return out;
}

}  // namespace cppgrad::gpt
