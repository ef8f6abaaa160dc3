#pragma once
// Plots made of characters, for the terminal: a heatmap and a sparkline.
#include <cstddef>
#include <string>
#include <vector>

namespace cppgrad::train {

// A heatmap for the terminal: one cell per weight using the shades " .:-=+*#%@" (and 256-colour backgrounds when
// `color`), with row and column labels, none of them cut: the row labels' column is as wide as the longest, and each
// cell as wide as the longest column label and a space (2 characters for one-character labels). Returns the text
// (lines end with '\n').
std::string terminal_heatmap(const std::vector<std::vector<double>>& weights, const std::vector<std::string>& row_labels,
                             const std::vector<std::string>& col_labels, bool color);

// A one-line sparkline of values using the blocks "▁▂▃▄▅▆▇█".
std::string sparkline(const std::vector<double>& values);

// At most n points: the mean of each of n equal runs of values (for a short sparkline of a long epoch); values as they
// are when there are n or fewer.
std::vector<double> downsample(const std::vector<double>& values, std::size_t n);

}  // namespace cppgrad::train
