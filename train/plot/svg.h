#pragma once
// A small SVG writer, enough for line charts and heatmaps: SVG is plain text, so no plotting library is needed and
// the output is the same bytes on every machine (tests compare it). The charts built on it are in charts.cpp and
// attention_maps.cpp; the text helpers (UTF-8 lengths, label truncation) also serve the terminal plots.
#include <array>
#include <cmath>
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cppgrad::train::svg {

// ---------------------------------------------------------------- text
// Text content and attribute values: the five XML specials escaped, control characters XML 1.0 forbids replaced.
std::string xml_escape(std::string_view s);
std::size_t utf8_length(std::string_view s);                   // code points (continuation bytes not counted)
std::string utf8_prefix(std::string_view s, std::size_t n);    // the first n code points
std::string truncate_label(std::string_view s, std::size_t n);  // at most n code points, "…" last when cut
double sans_width(std::string_view s, double font_size);        // estimated widths in pixels
double mono_width(std::string_view s, double font_size);
std::string tick_label(double v, int decimals = -1);             // "0.25", "1e-5"

// ---------------------------------------------------------------- document
std::string svg_open(double width, double height);  // the <svg> element and a white background
std::string svg_text(double x, double y, std::string_view text, double font_size, std::string_view anchor = "start",
                     std::string_view extra = "");
std::string svg_title(double width, std::string_view title);  // centred, bold
std::string no_data_svg(std::string_view title, double width, double height);  // a whole document saying "no data"

// ---------------------------------------------------------------- axes
struct Tick {
  double value;
  std::string label;
};

// A data window [x0, x1] x [y0, y1] drawn into the pixel box (left, top, width, height). The data is inset
// by `pad` pixels so dots on the edge are not cut by the frame.
struct Axes {
  double left, top, width, height;
  double x0, x1, y0, y1;
  bool ylog = false;
  double pad = 6;

  double px(double x) const {
    const double t = x1 > x0 ? (x - x0) / (x1 - x0) : 0.5;
    return left + pad + t * (width - 2 * pad);
  }
  double py(double y) const {
    double t = 0.5;
    if (ylog) {
      const double ly0 = std::log10(y0), ly1 = std::log10(y1);
      if (ly1 > ly0) t = (std::log10(y) - ly0) / (ly1 - ly0);
    } else if (y1 > y0) {
      t = (y - y0) / (y1 - y0);
    }
    t = std::clamp(t, -0.02, 1.02);  // a stray value stays at the frame instead of flying off the chart
    return top + height - pad - t * (height - 2 * pad);
  }
  bool plottable(double y) const { return std::isfinite(y) && (!ylog || y > 0); }
};

double nice_step(double span, double target);  // 1, 2 or 5 times a power of ten: about `target` intervals
// Data windows [y0, y1] / [x0, x1] with their ticks: linear, log (decades), or whole epochs.
void linear_y(double lo, double hi, double& y0, double& y1, std::vector<Tick>& ticks);
void log_y(double lo, double hi, double& y0, double& y1, std::vector<Tick>& ticks);
void epoch_x(double lo, double hi, double& x0, double& x1, std::vector<Tick>& ticks);
// A log y axis when the finite positive values span more than a decade, else linear.
void y_axis_for(const std::vector<double>& values, Axes& a, std::vector<Tick>& ticks);
// Grid, frame, tick labels and the x axis name.
std::string draw_axes(const Axes& a, const std::vector<Tick>& xticks, const std::vector<Tick>& yticks,
                      std::string_view xname);

// ---------------------------------------------------------------- series and legends
inline constexpr std::array<const char*, 10> kPalette = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                              "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
// Past ten curves the colours repeat with a different dash pattern.
inline constexpr std::array<const char*, 3> kDashes = {"", "6,3", "2,2"};

struct Series {
  std::string label;
  std::vector<double> xs, ys;
  std::string color;
  std::string dash;
};

inline constexpr double kLegendRow = 17, kLegendFont = 11;
std::vector<std::pair<double, double>> pixels(const Axes& a, const Series& s);  // the plottable points, in pixels
std::string draw_series(const Axes& a, const Series& s, bool dots);
double legend_width(const std::vector<Series>& series);
std::string draw_legend(double x, double y, const std::vector<Series>& series, bool framed);
// The corner (0 upper left, 1 upper right, 2 lower left, 3 lower right; tried in `preference` order) whose legend
// box covers the fewest samples of the curves: its top-left pixel.
std::pair<double, double> legend_corner(const Axes& a, const std::vector<Series>& series,
                                        const std::vector<int>& preference);

// ---------------------------------------------------------------- colour
std::string heat_colour(double v);  // white (0) to dark blue (1), grey when not finite

}  // namespace cppgrad::train::svg
