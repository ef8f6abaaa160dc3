// Line charts of training runs, on the SVG writer of svg.h: a run's loss and accuracies per epoch, and the loss curves
// of several runs (a sweep).
#include "train/plot/charts.h"

#include <algorithm>
#include <cmath>

#include "train/plot/svg.h"

namespace cppgrad::train {

using namespace svg;

// ================================================================ training curves

std::string training_curves_svg(const std::vector<std::int64_t>& epoch_numbers, const std::vector<double>& losses,
                                const std::vector<Curve>& accuracies, const std::string& title) {
  constexpr double W = 900, H = 360;
  if (epoch_numbers.empty()) return no_data_svg(title, W, H);

  const std::vector<double> epochs(epoch_numbers.begin(), epoch_numbers.end());
  double ex0 = 0, ex1 = 0;
  std::vector<Tick> xticks;
  epoch_x(*std::min_element(epochs.begin(), epochs.end()), *std::max_element(epochs.begin(), epochs.end()), ex0, ex1,
          xticks);
  const bool dots = epochs.size() <= 60;

  std::string s = svg_open(W, H);
  s += svg_title(W, title);

  // Left: the loss.
  Axes left{.left = 70, .top = 64, .width = 350, .height = 236, .x0 = ex0, .x1 = ex1, .y0 = 0, .y1 = 1};
  std::vector<Tick> loss_ticks;
  y_axis_for(losses, left, loss_ticks);
  s += svg_text(left.left + left.width / 2, 52, left.ylog ? "loss (log scale)" : "loss", 13, "middle",
                "font-weight=\"bold\"");
  s += draw_axes(left, xticks, loss_ticks, "epoch");
  s += draw_series(left, Series{"loss", epochs, losses, "#333333", ""}, dots);

  // Right: the accuracies on [0, 1].
  Axes right{.left = 520, .top = 64, .width = 350, .height = 236, .x0 = ex0, .x1 = ex1, .y0 = 0, .y1 = 1};
  std::vector<Tick> acc_ticks;
  for (int i = 0; i <= 5; ++i) acc_ticks.push_back({i / 5.0, tick_label(i / 5.0, 1)});
  std::vector<Series> acc;
  for (std::size_t i = 0; i < accuracies.size(); ++i)
    acc.push_back({accuracies[i].label, epochs, accuracies[i].values, kPalette[i % kPalette.size()], ""});
  s += svg_text(right.left + right.width / 2, 52, "accuracy", 13, "middle", "font-weight=\"bold\"");
  s += draw_axes(right, xticks, acc_ticks, "epoch");
  for (const Series& a : acc) s += draw_series(right, a, dots);
  const auto [lx, ly] = legend_corner(right, acc, {3, 1, 2, 0});
  s += draw_legend(lx, ly, acc, true);

  s += "</svg>\n";
  return s;
}

// ================================================================ loss curves of a sweep

std::string loss_curves_svg(const std::vector<Curve>& curves, const std::string& title, const std::string& x_label) {
  std::size_t longest = 0;
  double x_min = HUGE_VAL, x_max = 1;  // the x of the curves' first and last values
  std::vector<double> all;
  for (const Curve& c : curves) {
    longest = std::max(longest, c.values.size());
    x_max = std::max(x_max, c.steps.empty() ? static_cast<double>(c.values.size()) : c.steps.back());
    if (!c.values.empty()) x_min = std::min(x_min, c.steps.empty() ? 1.0 : c.steps.front());
    all.insert(all.end(), c.values.begin(), c.values.end());
  }
  if (curves.empty() || longest == 0) return no_data_svg(title, 900, 360);

  std::vector<Series> series;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    Series sr;
    sr.label = truncate_label(curves[i].label, 40);
    if (curves[i].values.empty()) sr.label += " (no data)";
    sr.color = kPalette[i % kPalette.size()];
    sr.dash = kDashes[(i / kPalette.size()) % kDashes.size()];
    for (std::size_t e = 0; e < curves[i].values.size(); ++e) {
      sr.xs.push_back(e < curves[i].steps.size() ? curves[i].steps[e] : static_cast<double>(e + 1));
      sr.ys.push_back(curves[i].values[e]);
    }
    series.push_back(std::move(sr));
  }

  // The legend sits to the right of the plot, so any number of curves fits without covering them.
  const double legend_w = legend_width(series);
  const double plot_h = std::max(236.0, kLegendRow * series.size() + 8);
  const double W = std::max(900.0, 70 + 400 + 24 + legend_w + 16), H = 64 + plot_h + 60;
  Axes a{.left = 70, .top = 64, .width = W - 70 - 24 - legend_w - 16, .height = plot_h, .x0 = 0, .x1 = 1, .y0 = 0,
         .y1 = 1};
  std::vector<Tick> xticks, yticks;
  epoch_x(x_min, x_max, a.x0, a.x1, xticks);
  y_axis_for(all, a, yticks);

  std::string s = svg_open(W, H);
  s += svg_title(W, title);
  s += svg_text(a.left + a.width / 2, 52, a.ylog ? "loss (log scale)" : "loss", 13, "middle", "font-weight=\"bold\"");
  s += draw_axes(a, xticks, yticks, x_label);
  const bool dots = longest <= 40;
  for (const Series& sr : series)
    if (!sr.xs.empty()) s += draw_series(a, sr, dots);
  s += draw_legend(a.left + a.width + 24, a.top, series, false);
  s += "</svg>\n";
  return s;
}

}  // namespace cppgrad::train
