#pragma once
// Line charts of training runs as SVG documents (plain text: no plotting library, the same bytes on every machine).
#include <cstdint>
#include <string>
#include <vector>

namespace cppgrad::train {

// One curve: its label and its values, at x = 1, 2, ... (epochs) unless `steps` gives each value's x.
struct Curve {
  std::string label;
  std::vector<double> values;
  std::vector<double> steps = {};  // empty, or one x per value (e.g. the step of each evaluation), increasing
};

// Two panels side by side: the loss per epoch (log scale when it spans more than a decade), and accuracies per
// epoch on 0..1, one curve each (values beside `epochs`), in the palette's first colours. Returns the SVG document.
//   epochs: the epoch numbers plotted (1, 2, ...)  losses: one per epoch
std::string training_curves_svg(const std::vector<std::int64_t>& epochs, const std::vector<double>& losses,
                                const std::vector<Curve>& accuracies, const std::string& title);

// Several loss curves in one chart with a legend beside it (a sweep's runs; a run's train and validation loss).
std::string loss_curves_svg(const std::vector<Curve>& curves, const std::string& title,
                            const std::string& x_label = "epoch");

}  // namespace cppgrad::train
