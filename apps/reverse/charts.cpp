// The three charts of cppgrad-reverse, on the SVG writer of svg.h: training curves (loss and accuracies per epoch),
// the loss curves of a sweep, and a grid of attention maps.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "reverse/report.h"
#include "reverse/svg.h"

namespace cppgrad::reverse {

using namespace svg;

// ================================================================ training curves

std::string training_curves_svg(const std::vector<EpochPoint>& points, const std::string& title) {
  constexpr double W = 900, H = 360;
  if (points.empty()) return no_data_svg(title, W, H);

  std::vector<double> epochs, losses;
  for (const EpochPoint& p : points) {
    epochs.push_back(static_cast<double>(p.epoch));
    losses.push_back(p.loss);
  }
  double ex0 = 0, ex1 = 0;
  std::vector<Tick> xticks;
  epoch_x(*std::min_element(epochs.begin(), epochs.end()), *std::max_element(epochs.begin(), epochs.end()), ex0, ex1,
          xticks);
  const bool dots = points.size() <= 60;

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
  std::vector<Series> acc(3);
  acc[0] = {"train token acc", epochs, {}, kPalette[0], ""};
  acc[1] = {"test seq acc", epochs, {}, kPalette[1], ""};
  acc[2] = {"test token acc", epochs, {}, kPalette[2], ""};
  for (const EpochPoint& p : points) {
    acc[0].ys.push_back(p.train_token_acc);
    acc[1].ys.push_back(p.test_seq_acc);
    acc[2].ys.push_back(p.test_token_acc);
  }
  s += svg_text(right.left + right.width / 2, 52, "accuracy", 13, "middle", "font-weight=\"bold\"");
  s += draw_axes(right, xticks, acc_ticks, "epoch");
  for (const Series& a : acc) s += draw_series(right, a, dots);
  const auto [lx, ly] = legend_corner(right, acc, {3, 1, 2, 0});
  s += draw_legend(lx, ly, acc, true);

  s += "</svg>\n";
  return s;
}

// ================================================================ loss curves of a sweep

std::string loss_curves_svg(const std::vector<Curve>& curves, const std::string& title) {
  std::size_t longest = 0;
  std::vector<double> all;
  for (const Curve& c : curves) {
    longest = std::max(longest, c.values.size());
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
      sr.xs.push_back(static_cast<double>(e + 1));
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
  epoch_x(1, static_cast<double>(longest), a.x0, a.x1, xticks);
  y_axis_for(all, a, yticks);

  std::string s = svg_open(W, H);
  s += svg_title(W, title);
  s += svg_text(a.left + a.width / 2, 52, a.ylog ? "loss (log scale)" : "loss", 13, "middle", "font-weight=\"bold\"");
  s += draw_axes(a, xticks, yticks, "epoch");
  const bool dots = longest <= 40;
  for (const Series& sr : series)
    if (!sr.xs.empty()) s += draw_series(a, sr, dots);
  s += draw_legend(a.left + a.width + 24, a.top, series, false);
  s += "</svg>\n";
  return s;
}

// ================================================================ attention maps

namespace {

// Label i from `labels`, or the index when there is none.
std::string label_at(const std::vector<std::string>& labels, std::size_t i) {
  return truncate_label(i < labels.size() ? labels[i] : std::to_string(i), 12);
}

}  // namespace

namespace {

// Where every panel of the grid goes: up to four per row, each slot a title, the column labels, and the map of
// cells (between 8 and 28 px, so a map is about 240 px across).
struct MapGrid {
  double cell, fs;             // cell size, tick label font size (monospace)
  double row_w, col_h;         // the row labels' column, the column labels' band
  bool vertical_cols;          // column labels wider than a cell are written upward
  double slot_w, slot_h, W, H;
  std::size_t per_row;
  static constexpr double title_fs = 12, title_h = 20, gap_x = 28, gap_y = 24, margin = 20, header = 48;
};

const std::vector<std::string>& labels_or(const std::vector<std::string>& own, const std::vector<std::string>& shared) {
  return own.empty() ? shared : own;
}

MapGrid layout_maps(const std::vector<AttentionPanel>& panels, const std::vector<std::string>& row_labels,
                    const std::vector<std::string>& col_labels, const std::string& title, std::size_t max_q,
                    std::size_t max_k) {
  MapGrid g{};
  g.cell = std::clamp(std::floor(240.0 / static_cast<double>(std::max(max_q, max_k))), 8.0, 28.0);
  g.fs = std::clamp(std::floor(g.cell * 0.7), 7.0, 12.0);
  double row_w = 0, col_chars_w = 0, title_w = 0;
  for (const AttentionPanel& p : panels) {
    for (std::size_t i = 0; i < max_q; ++i) row_w = std::max(row_w, mono_width(label_at(labels_or(p.row_labels, row_labels), i), g.fs));
    for (std::size_t j = 0; j < max_k; ++j)
      col_chars_w = std::max(col_chars_w, mono_width(label_at(labels_or(p.col_labels, col_labels), j), g.fs));
    title_w = std::max(title_w, sans_width(p.title, MapGrid::title_fs));
  }
  g.vertical_cols = col_chars_w > g.cell - 2;
  g.col_h = g.vertical_cols ? col_chars_w + 6 : g.fs + 4;
  g.row_w = row_w + 6;
  const double map_w = static_cast<double>(max_k) * g.cell, map_h = static_cast<double>(max_q) * g.cell;
  g.slot_w = std::max(g.row_w + map_w, title_w) + MapGrid::gap_x;
  g.slot_h = MapGrid::title_h + g.col_h + map_h + MapGrid::gap_y;
  g.per_row = std::min<std::size_t>(4, panels.size());
  const std::size_t n_rows = (panels.size() + g.per_row - 1) / g.per_row;
  g.W = std::max(2 * MapGrid::margin + g.slot_w * static_cast<double>(g.per_row) - MapGrid::gap_x, sans_width(title, 16) + 220);
  g.H = MapGrid::header + g.slot_h * static_cast<double>(n_rows) - MapGrid::gap_y + MapGrid::margin;
  return g;
}

// The colour scale in the top right corner: 0 (white) to 1 (dark blue).
std::string colour_scale(const MapGrid& g) {
  std::string s = "<defs><linearGradient id=\"heat\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">"
                  "<stop offset=\"0\" stop-color=\"#ffffff\"/><stop offset=\"1\" stop-color=\"#08306b\"/></linearGradient></defs>\n";
  const double bar_x = g.W - MapGrid::margin - 120;
  s += fmt::format("<rect x=\"{:.1f}\" y=\"16\" width=\"120\" height=\"10\" fill=\"url(#heat)\" stroke=\"#888\"/>\n", bar_x);
  s += svg_text(bar_x - 4, 25, "0", 10, "end");
  s += svg_text(bar_x + 124, 25, "1", 10, "start");
  s += svg_text(bar_x + 60, 40, "rows: queries, columns: keys", 9, "middle", "fill=\"#555\"");
  return s;
}

// One panel at slot n: its title, column labels (keys) along the top, row labels (queries) down the left, and the
// cells, each with its value on hover.
std::string heat_panel(const MapGrid& g, std::size_t n, const AttentionPanel& p, const std::vector<std::string>& rl,
                       const std::vector<std::string>& cl) {
  const double ox = MapGrid::margin + g.slot_w * static_cast<double>(n % g.per_row);
  const double oy = MapGrid::header + g.slot_h * static_cast<double>(n / g.per_row);
  const double mx = ox + g.row_w, my = oy + MapGrid::title_h + g.col_h;  // the map's top-left corner
  std::size_t lq = p.weights.size(), lk = 0;
  for (const auto& row : p.weights) lk = std::max(lk, row.size());
  std::string s = "<g>\n" + svg_text(ox, oy + 13, p.title, MapGrid::title_fs, "start", "font-weight=\"bold\"");
  s += fmt::format("<g font-family=\"DejaVu Sans Mono, monospace\" font-size=\"{:g}\" fill=\"#333\">\n", g.fs);
  for (std::size_t j = 0; j < lk; ++j) {
    const double cx = mx + (static_cast<double>(j) + 0.5) * g.cell;
    const std::string text = xml_escape(label_at(cl, j));
    if (g.vertical_cols)
      s += fmt::format("<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" text-anchor=\"start\">{}</text>\n",
                       cx + g.fs * 0.35, my - 4, text);
    else
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", cx, my - 4, text);
  }
  for (std::size_t i = 0; i < lq; ++i)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", mx - 4,
                     my + (static_cast<double>(i) + 0.5) * g.cell + g.fs * 0.35, xml_escape(label_at(rl, i)));
  s += "</g>\n<g shape-rendering=\"crispEdges\">\n";
  for (std::size_t i = 0; i < lq; ++i)
    for (std::size_t j = 0; j < p.weights[i].size(); ++j)
      s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:g}\" height=\"{:g}\" fill=\"{}\"><title>{} → {}: {:.3f}</title>"
                       "</rect>\n",
                       mx + static_cast<double>(j) * g.cell, my + static_cast<double>(i) * g.cell, g.cell, g.cell,
                       heat_colour(p.weights[i][j]), xml_escape(label_at(rl, i)), xml_escape(label_at(cl, j)),
                       p.weights[i][j]);
  s += "</g>\n";
  s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:g}\" height=\"{:g}\" fill=\"none\" stroke=\"#666\"/>\n", mx,
                   my, static_cast<double>(lk) * g.cell, static_cast<double>(lq) * g.cell);
  return s + "</g>\n";
}

}  // namespace

std::string attention_maps_svg(const std::vector<AttentionPanel>& panels, const std::vector<std::string>& row_labels,
                               const std::vector<std::string>& col_labels, const std::string& title) {
  std::size_t max_q = 0, max_k = 0;
  for (const AttentionPanel& p : panels) {
    max_q = std::max(max_q, p.weights.size());
    for (const auto& row : p.weights) max_k = std::max(max_k, row.size());
  }
  if (panels.empty() || max_q == 0 || max_k == 0) return no_data_svg(title, 600, 240);
  const MapGrid g = layout_maps(panels, row_labels, col_labels, title, max_q, max_k);
  std::string s = svg_open(g.W, g.H);
  if (!title.empty()) s += svg_text(MapGrid::margin, 28, title, 16, "start", "font-weight=\"bold\"");
  s += colour_scale(g);
  for (std::size_t n = 0; n < panels.size(); ++n)
    s += heat_panel(g, n, panels[n], labels_or(panels[n].row_labels, row_labels), labels_or(panels[n].col_labels, col_labels));
  return s + "</svg>\n";
}

}  // namespace cppgrad::reverse
