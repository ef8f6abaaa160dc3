// Attention maps as SVG: a grid of heatmaps, one per (layer, head), on the SVG writer of svg.h.
#include "train/plot/attention_maps.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "train/plot/svg.h"

namespace cppgrad::train {

using namespace svg;

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

}  // namespace cppgrad::train
