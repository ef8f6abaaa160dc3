// Plots made of characters: a heatmap of shades and 256-colour backgrounds, and sparklines.
#include "train/plot/terminal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "train/plot/svg.h"

namespace cppgrad::train {

using svg::utf8_length;

// ================================================================ terminal heatmap

std::string terminal_heatmap(const std::vector<std::vector<double>>& weights, const std::vector<std::string>& row_labels,
                             const std::vector<std::string>& col_labels, bool color) {
  static constexpr std::string_view kShades = " .:-=+*#%@";
  std::size_t n_cols = col_labels.size();
  for (const auto& row : weights) n_cols = std::max(n_cols, row.size());

  std::vector<std::string> rows(weights.size());
  std::size_t label_w = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    rows[i] = i < row_labels.size() ? row_labels[i] : std::to_string(i);
    label_w = std::max(label_w, utf8_length(rows[i]));
  }

  // Every cell is as wide as the longest column label and a space, at least 2 characters (the usual one-character
  // labels keep square cells): a label is never cut ("<b>" stays "<b>", token 123 stays 123), and the space keeps
  // neighbouring labels apart.
  std::vector<std::string> cols(n_cols);
  std::size_t cell_w = 2;
  for (std::size_t j = 0; j < n_cols; ++j) {
    cols[j] = j < col_labels.size() ? col_labels[j] : std::to_string(j);
    cell_w = std::max(cell_w, utf8_length(cols[j]) + 1);
  }

  // Header: each column label at the left of its cell, padded with spaces.
  std::string out(label_w + 1, ' ');
  for (const std::string& lab : cols) out += lab + std::string(cell_w - utf8_length(lab), ' ');
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += '\n';

  for (std::size_t i = 0; i < weights.size(); ++i) {
    out += std::string(label_w - utf8_length(rows[i]), ' ') + rows[i] + ' ';
    int last_bg = -1;  // colour codes are written only when the colour changes
    for (std::size_t j = 0; j < weights[i].size(); ++j) {
      const double v = weights[i][j];
      char shade = '?';
      int level = 0;
      if (!std::isnan(v)) {
        const double t = std::clamp(v, 0.0, 1.0);
        level = std::min(9, static_cast<int>(t * 10));  // ten equal bins: [0, 0.1) is ' ', [0.9, 1] is '@'
        shade = kShades[level];
      }
      if (color) {
        // Grayscale ramp 232 (near black) .. 255 (near white); the glyph in black or white for contrast.
        const int bg = std::isnan(v) ? 196 : 232 + static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 23));
        const int fg = bg >= 244 ? 16 : 255;
        if (bg != last_bg) out += fmt::format("\x1b[48;5;{}m\x1b[38;5;{}m", bg, fg);
        last_bg = bg;
      }
      out.append(cell_w, shade);
    }
    if (color) out += "\x1b[0m";
    out += '\n';
  }
  return out;
}

// ================================================================ sparkline

std::string sparkline(const std::vector<double>& values) {
  static constexpr std::array<std::string_view, 8> kBlocks = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const double v : values)
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  std::string out;
  for (const double v : values) {
    if (!std::isfinite(v)) {
      out += ' ';
    } else if (hi > lo) {
      out += kBlocks[static_cast<std::size_t>(std::lround((v - lo) / (hi - lo) * 7))];
    } else {
      out += kBlocks[3];  // constant input: the middle block
    }
  }
  return out;
}

std::vector<double> downsample(const std::vector<double>& values, std::size_t n) {
  if (values.size() <= n) return values;
  std::vector<double> out(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t a = i * values.size() / n, b = (i + 1) * values.size() / n;
    for (std::size_t j = a; j < b; ++j) out[i] += values[j] / static_cast<double>(b - a);
  }
  return out;
}

}  // namespace cppgrad::train
