// The SVG writer behind the training charts (charts.cpp, attention_maps.cpp): text, axes, series and legends placed in
// pixel space by one small `Axes` mapping. Text widths are estimated (0.6 em per character in monospace, ~0.56 em in
// sans-serif), which is enough to keep labels apart.
#include "train/plot/svg.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace cppgrad::train::svg {

// Text content and attribute values: the five XML specials, and control characters XML 1.0 forbids.
std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

// Number of code points in a UTF-8 string (continuation bytes are not counted).
std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

// The first `n` code points of s.
std::string utf8_prefix(std::string_view s, std::size_t n) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (count == n) return std::string(s.substr(0, i));
      ++count;
    }
  }
  return std::string(s);
}

// At most `n` code points, the last one an ellipsis when the text was cut.
std::string truncate_label(std::string_view s, std::size_t n) {
  if (utf8_length(s) <= n) return std::string(s);
  return utf8_prefix(s, n - 1) + "…";
}

double sans_width(std::string_view s, double font_size) { return 0.56 * font_size * utf8_length(s); }
double mono_width(std::string_view s, double font_size) { return 0.6 * font_size * utf8_length(s); }

// Tick labels: plain decimals in a readable range, "1e-5" outside it.
std::string tick_label(double v, int decimals) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e-3 && a < 1e5) {
    if (decimals >= 0) return fmt::format("{:.{}f}", v, decimals);
    return fmt::format("{:g}", v);
  }
  const int e = static_cast<int>(std::floor(std::log10(a)));
  const double m = v / std::pow(10.0, e);
  if (std::fabs(m - std::round(m)) < 1e-9) return fmt::format("{}e{}", static_cast<int>(std::round(m)), e);
  return fmt::format("{:.1f}e{}", m, e);
}


std::string svg_open(double width, double height) {
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
      width, height);
  s += fmt::format("<rect x=\"0\" y=\"0\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"white\"/>\n", width, height);
  return s;
}

std::string svg_text(double x, double y, std::string_view text, double font_size, std::string_view anchor,
                     std::string_view extra) {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{:g}\" text-anchor=\"{}\"{}{}>{}</text>\n", x, y,
                     font_size, anchor, extra.empty() ? "" : " ", extra, xml_escape(text));
}

std::string svg_title(double width, std::string_view title) {
  if (title.empty()) return "";
  return svg_text(width / 2, 26, title, 16, "middle", "font-weight=\"bold\"");
}

// An SVG that says there is nothing to plot.
std::string no_data_svg(std::string_view title, double width, double height) {
  std::string s = svg_open(width, height);
  s += svg_title(width, title);
  s += svg_text(width / 2, height / 2, "no data", 16, "middle", "fill=\"#888\"");
  s += "</svg>\n";
  return s;
}

// ---------------------------------------------------------------- axes



// A step of 1, 2 or 5 times a power of ten giving about `target` intervals over `span`.
double nice_step(double span, double target) {
  if (!(span > 0)) return 1;
  const double rough = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(rough)));
  const double norm = rough / mag;
  const double f = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
  return f * mag;
}

int step_decimals(double step) { return std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9))); }

// Linear y range snapped outward to nice ticks.
void linear_y(double lo, double hi, double& y0, double& y1, std::vector<Tick>& ticks) {
  if (hi <= lo) {
    const double d = lo != 0 ? std::fabs(lo) * 0.1 : 1.0;
    lo -= d;
    hi += d;
  }
  const double step = nice_step(hi - lo, 5);
  y0 = std::floor(lo / step + 1e-9) * step;
  y1 = std::ceil(hi / step - 1e-9) * step;
  const int dec = step_decimals(step);
  for (double v = y0; v <= y1 + step * 1e-6; v += step) {
    const double r = std::fabs(v) < step * 1e-6 ? 0.0 : v;
    ticks.push_back({r, tick_label(r, dec)});
  }
}

// Log y range padded a little in log space; ticks at the decades, plus 2x and 5x when decades are few.
void log_y(double lo, double hi, double& y0, double& y1, std::vector<Tick>& ticks) {
  const double llo = std::log10(lo), lhi = std::log10(hi);
  const double padding = 0.04 * (lhi - llo);
  y0 = std::pow(10.0, llo - padding);
  y1 = std::pow(10.0, lhi + padding);
  std::vector<double> values;
  const int k0 = static_cast<int>(std::floor(std::log10(y0))), k1 = static_cast<int>(std::ceil(std::log10(y1)));
  for (int k = k0; k <= k1; ++k) values.push_back(std::pow(10.0, k));
  auto inside = [&](double v) { return v >= y0 * (1 - 1e-9) && v <= y1 * (1 + 1e-9); };
  const auto decades = std::count_if(values.begin(), values.end(), inside);
  if (decades < 3)
    for (int k = k0; k <= k1; ++k) {
      values.push_back(2 * std::pow(10.0, k));
      values.push_back(5 * std::pow(10.0, k));
    }
  std::sort(values.begin(), values.end());
  for (const double v : values)
    if (inside(v)) ticks.push_back({v, tick_label(v)});
}

// Integer epoch ticks over [lo, hi]; a single epoch gets a window of one epoch either side.
void epoch_x(double lo, double hi, double& x0, double& x1, std::vector<Tick>& ticks) {
  if (hi <= lo) {  // one epoch: centred, with its own tick only
    x0 = lo - 1;
    x1 = hi + 1;
    ticks.push_back({lo, tick_label(lo, 0)});
    return;
  }
  x0 = lo;
  x1 = hi;
  const double step = std::max(1.0, std::round(nice_step(hi - lo, 8)));
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9; v += step) ticks.push_back({v, tick_label(v, 0)});
  if (ticks.size() < 2) {  // keep at least the two ends labelled
    ticks.clear();
    ticks.push_back({lo, tick_label(lo, 0)});
    ticks.push_back({hi, tick_label(hi, 0)});
  }
}

// Grid, frame, tick labels and the x axis name.
std::string draw_axes(const Axes& a, const std::vector<Tick>& xticks, const std::vector<Tick>& yticks,
                      std::string_view xname) {
  std::string s = "<g>\n";
  for (const Tick& t : yticks) {
    const double y = a.py(t.value);
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e5e5e5\"/>\n", a.left, y,
                     a.left + a.width, y);
    s += svg_text(a.left - 6, y + 4, t.label, 11, "end", "fill=\"#333\"");
  }
  for (const Tick& t : xticks) {
    const double x = a.px(t.value);
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e5e5e5\"/>\n", x, a.top, x,
                     a.top + a.height);
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n", x,
                     a.top + a.height, a.top + a.height + 4);
    s += svg_text(x, a.top + a.height + 16, t.label, 11, "middle", "fill=\"#333\"");
  }
  s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#333\"/>\n",
                   a.left, a.top, a.width, a.height);
  if (!xname.empty()) s += svg_text(a.left + a.width / 2, a.top + a.height + 34, xname, 12, "middle");
  s += "</g>\n";
  return s;
}


// Pixel positions of a series' plottable points.
std::vector<std::pair<double, double>> pixels(const Axes& a, const Series& s) {
  std::vector<std::pair<double, double>> p;
  for (std::size_t i = 0; i < s.xs.size() && i < s.ys.size(); ++i)
    if (std::isfinite(s.xs[i]) && a.plottable(s.ys[i])) p.emplace_back(a.px(s.xs[i]), a.py(s.ys[i]));
  return p;
}

// One polyline per series (non-finite points are skipped), and dots when there are few enough points to see.
std::string draw_series(const Axes& a, const Series& s, bool dots) {
  const auto p = pixels(a, s);
  std::string pts;
  for (const auto& [x, y] : p) pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", x, y);
  std::string out = fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-linejoin=\"round\"{}>"
      "<title>{}</title></polyline>\n",
      pts, s.color, s.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", s.dash), xml_escape(s.label));
  if (dots && !p.empty()) {
    out += fmt::format("<g fill=\"{}\">\n", s.color);
    for (std::size_t i = 0, k = 0; i < s.xs.size() && i < s.ys.size(); ++i) {
      if (!std::isfinite(s.xs[i]) || !a.plottable(s.ys[i])) continue;
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"><title>{}: {} = {:.4g}</title></circle>\n",
                         p[k].first, p[k].second, tick_label(s.xs[i], 0), xml_escape(s.label), s.ys[i]);
      ++k;
    }
    out += "</g>\n";
  }
  return out;
}


double legend_width(const std::vector<Series>& series) {
  double w = 0;
  for (const Series& s : series) w = std::max(w, sans_width(s.label, kLegendFont));
  return w + 40;
}

// A legend box with its top-left corner at (x, y): a short line sample and the label per series.
std::string draw_legend(double x, double y, const std::vector<Series>& series, bool framed) {
  const double w = legend_width(series), h = kLegendRow * series.size() + 8;
  std::string s = "<g>\n";
  if (framed)
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"white\" fill-opacity=\"0.85\" "
        "stroke=\"#bbb\"/>\n",
        x, y, w, h);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double cy = y + 4 + kLegendRow * (i + 0.5);
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                     x + 6, cy, x + 28, cy, series[i].color,
                     series[i].dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", series[i].dash));
    s += svg_text(x + 34, cy + 4, series[i].label, kLegendFont);
  }
  s += "</g>\n";
  return s;
}

// The corner of the plot (in the order of preference given) whose legend box covers the fewest samples
// of the curves; each segment is sampled so that sparse curves count as well.
std::pair<double, double> legend_corner(const Axes& a, const std::vector<Series>& series,
                                        const std::vector<int>& preference) {
  const double w = legend_width(series), h = kLegendRow * series.size() + 8, m = 8;
  std::vector<std::pair<double, double>> samples;
  for (const Series& s : series) {
    const auto p = pixels(a, s);
    for (std::size_t i = 0; i < p.size(); ++i) {
      samples.push_back(p[i]);
      if (i + 1 < p.size())
        for (int k = 1; k < 12; ++k) {
          const double t = k / 12.0;
          samples.emplace_back(p[i].first + t * (p[i + 1].first - p[i].first),
                               p[i].second + t * (p[i + 1].second - p[i].second));
        }
    }
  }
  // 0 = upper left, 1 = upper right, 2 = lower left, 3 = lower right
  auto origin = [&](int c) {
    const double x = (c % 2 == 0) ? a.left + m : a.left + a.width - m - w;
    const double y = (c < 2) ? a.top + m : a.top + a.height - m - h;
    return std::pair{x, y};
  };
  int best = preference.front();
  std::size_t best_hits = std::numeric_limits<std::size_t>::max();
  for (const int c : preference) {
    const auto [x, y] = origin(c);
    std::size_t hits = 0;
    for (const auto& [sx, sy] : samples)
      if (sx >= x - 3 && sx <= x + w + 3 && sy >= y - 3 && sy <= y + h + 3) ++hits;
    if (hits < best_hits) {
      best_hits = hits;
      best = c;
    }
  }
  return origin(best);
}

// Chooses a log y axis when the finite positive values span more than a decade.
void y_axis_for(const std::vector<double>& values, Axes& a, std::vector<Tick>& ticks) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const double v : values)
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!std::isfinite(lo)) {
    lo = 0;
    hi = 1;
  }
  a.ylog = lo > 0 && hi / lo > 10;
  if (a.ylog)
    log_y(lo, hi, a.y0, a.y1, ticks);
  else
    linear_y(lo, hi, a.y0, a.y1, ticks);
}


// White (0) to dark blue (1), linearly in RGB; non-finite values are grey.
std::string heat_colour(double v) {
  if (!std::isfinite(v)) return "#c8c8c8";
  const double t = std::clamp(v, 0.0, 1.0);
  constexpr double r1 = 8, g1 = 48, b1 = 107;  // #08306b
  auto mix = [t](double hi) { return static_cast<int>(std::lround(255 + t * (hi - 255))); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(r1), mix(g1), mix(b1));
}

}  // namespace cppgrad::train::svg
