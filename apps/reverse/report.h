#pragma once
// Presentation for cppgrad-reverse: a terminal progress bar, hand-written SVG plots (training curves, loss
// curves of a sweep, attention maps) and a terminal heatmap. No plotting library: SVG is plain text.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace cppgrad::reverse {

// A one-line progress bar redrawn in place when `out` is a terminal; when it is not (a pipe, a log file)
// it prints nothing per step, so logs stay clean, and the caller's epoch line is the record.
//   epoch  3/30 [=========>          ] 41/79  loss 0.4312  512.3 steps/s
class ProgressBar {
 public:
  ProgressBar(std::FILE* out, std::string label, std::int64_t total);
  void update(std::int64_t done, double loss, double steps_per_s);
  void finish();  // clears the line (terminal) so the epoch summary can be printed in its place
  static bool is_terminal(std::FILE* out);

 private:
  std::FILE* out_;
  std::string label_;
  std::int64_t total_;
  bool tty_;
  double last_draw_s_ = -1;
};

// One epoch of a training run, as plotted.
struct EpochPoint {
  std::int64_t epoch;
  double loss;
  double train_token_acc;
  double test_seq_acc;
  double test_token_acc;
};

// Two panels side by side: loss per epoch (log scale when it spans more than a decade), and the three
// accuracies per epoch (0..1). Returns the SVG document.
std::string training_curves_svg(const std::vector<EpochPoint>& points, const std::string& title);

// Several runs' loss curves in one chart with a legend (for `sweep`).
struct Curve {
  std::string label;
  std::vector<double> values;  // one per epoch, epoch 1 first
};
std::string loss_curves_svg(const std::vector<Curve>& curves, const std::string& title);

// A grid of attention maps, one heatmap per (layer, head): weights[i][j] in [0, 1], rows = queries
// (output positions), columns = keys (input positions), with tick labels (the tokens) on both axes.
struct AttentionPanel {
  std::string title;                       // "decoder.1.cross_attn head 2"
  std::vector<std::vector<double>> weights;  // [Lq][Lk]
  // This panel's own labels (self-attention maps label both axes differently from cross-attention ones);
  // empty: the labels passed to attention_maps_svg.
  std::vector<std::string> row_labels = {}, col_labels = {};
};
std::string attention_maps_svg(const std::vector<AttentionPanel>& panels, const std::vector<std::string>& row_labels,
                               const std::vector<std::string>& col_labels, const std::string& title);

// A heatmap for the terminal: one character cell per weight using the shades " .:-=+*#%@" (and 256-colour
// backgrounds when `color`), with row and column labels. Returns the text (lines end with '\n').
std::string terminal_heatmap(const std::vector<std::vector<double>>& weights, const std::vector<std::string>& row_labels,
                             const std::vector<std::string>& col_labels, bool color);


// A one-line sparkline of values using the blocks "▁▂▃▄▅▆▇█".
std::string sparkline(const std::vector<double>& values);

}  // namespace cppgrad::reverse
