#pragma once
// Attention weights drawn as SVG: a grid of heatmaps, one per (layer, head).
#include <string>
#include <vector>

namespace cppgrad::train {

// One heatmap: weights[i][j] in [0, 1], rows = queries (output positions), columns = keys (input positions).
struct AttentionPanel {
  std::string title;                         // "decoder.1.cross_attn head 2"
  std::vector<std::vector<double>> weights;  // [Lq][Lk]
  // This panel's own labels (self-attention maps label both axes differently from cross-attention ones);
  // empty: the labels passed to attention_maps_svg.
  std::vector<std::string> row_labels = {}, col_labels = {};
};

// The panels in a grid (up to four a row) with tick labels (the tokens) on both axes and a colour scale.
std::string attention_maps_svg(const std::vector<AttentionPanel>& panels, const std::vector<std::string>& row_labels,
                               const std::vector<std::string>& col_labels, const std::string& title);

}  // namespace cppgrad::train
