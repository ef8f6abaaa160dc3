// Presentation for cppgrad-reverse. The SVGs are written by hand: a chart is a frame, grid lines, tick
// labels and polylines, all placed in pixel space by one small `Axes` mapping. Text widths are estimated
// (0.6 em per character in monospace, ~0.56 em in sans-serif), which is enough to keep labels apart.
#include "reverse/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace cppgrad::reverse {

// ================================================================ progress bar

namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

constexpr double kRedrawInterval = 0.05;  // at most ~20 redraws per second
constexpr int kBarWidth = 20;

int digits(std::int64_t v) { return static_cast<int>(fmt::formatted_size("{}", v)); }

}  // namespace

ProgressBar::ProgressBar(std::FILE* out, std::string label, std::int64_t total)
    : out_(out), label_(std::move(label)), total_(total), tty_(is_terminal(out)) {}

bool ProgressBar::is_terminal(std::FILE* out) { return out != nullptr && ::isatty(::fileno(out)) == 1; }

void ProgressBar::update(std::int64_t done, double loss, double steps_per_s) {
  if (!tty_) return;
  const bool final_step = total_ > 0 && done >= total_;
  const double now = now_seconds();
  if (!final_step && last_draw_s_ >= 0 && now - last_draw_s_ < kRedrawInterval) return;
  last_draw_s_ = now;

  // [=========>          ]: `filled` cells, the last one an arrow until the run is complete.
  std::string bar(kBarWidth, ' ');
  if (total_ > 0) {
    const std::int64_t clamped = std::clamp<std::int64_t>(done, 0, total_);
    const int filled = static_cast<int>(clamped * kBarWidth / total_);
    for (int i = 0; i < filled; ++i) bar[i] = '=';
    if (!final_step && filled > 0) bar[filled - 1] = '>';
  }
  const int w = digits(std::max<std::int64_t>(total_, 0));
  std::string line = fmt::format("{} [{}] {:>{}}/{}  loss {:.4f}  {:.1f} steps/s", label_, bar, done, w, total_, loss,
                                 steps_per_s);
  std::fputs("\r", out_);
  std::fputs(line.c_str(), out_);
  std::fputs("\x1b[K", out_);  // clear whatever a longer previous line left behind
  std::fflush(out_);
}

void ProgressBar::finish() {
  if (!tty_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  last_draw_s_ = -1;
}

// ================================================================ SVG helpers

namespace {

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
std::string tick_label(double v, int decimals = -1) {
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

const std::array<const char*, 10> kPalette = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                              "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
// Past ten curves the colours repeat with a different dash pattern.
const std::array<const char*, 3> kDashes = {"", "6,3", "2,2"};

std::string svg_open(double width, double height) {
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
      width, height);
  s += fmt::format("<rect x=\"0\" y=\"0\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"white\"/>\n", width, height);
  return s;
}

std::string svg_text(double x, double y, std::string_view text, double font_size, std::string_view anchor = "start",
                     std::string_view extra = "") {
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

struct Series {
  std::string label;
  std::vector<double> xs, ys;
  std::string color;
  std::string dash;
};

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

constexpr double kLegendRow = 17, kLegendFont = 11;

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

}  // namespace

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

// White (0) to dark blue (1), linearly in RGB; non-finite values are grey.
std::string heat_colour(double v) {
  if (!std::isfinite(v)) return "#c8c8c8";
  const double t = std::clamp(v, 0.0, 1.0);
  constexpr double r1 = 8, g1 = 48, b1 = 107;  // #08306b
  auto mix = [t](double hi) { return static_cast<int>(std::lround(255 + t * (hi - 255))); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(r1), mix(g1), mix(b1));
}

// Label i from `labels`, or the index when there is none.
std::string label_at(const std::vector<std::string>& labels, std::size_t i) {
  return truncate_label(i < labels.size() ? labels[i] : std::to_string(i), 12);
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

  // Cell size: a panel's map is about 240 px across, cells between 8 and 28 px.
  const double cell = std::clamp(std::floor(240.0 / static_cast<double>(std::max(max_q, max_k))), 8.0, 28.0);
  const double fs = std::clamp(std::floor(cell * 0.7), 7.0, 12.0);  // tick label font size (monospace)
  constexpr double title_fs = 12, title_h = 20, gap_x = 28, gap_y = 24, margin = 20, header = 48;

  auto rows_of = [&](const AttentionPanel& p) -> const std::vector<std::string>& {
    return p.row_labels.empty() ? row_labels : p.row_labels;
  };
  auto cols_of = [&](const AttentionPanel& p) -> const std::vector<std::string>& {
    return p.col_labels.empty() ? col_labels : p.col_labels;
  };
  double row_w = 0, col_h = 0, col_chars_w = 0;
  for (const AttentionPanel& p : panels) {
    for (std::size_t i = 0; i < max_q; ++i) row_w = std::max(row_w, mono_width(label_at(rows_of(p), i), fs));
    for (std::size_t j = 0; j < max_k; ++j) col_chars_w = std::max(col_chars_w, mono_width(label_at(cols_of(p), j), fs));
  }
  const bool vertical_cols = col_chars_w > cell - 2;  // labels wider than a cell are written upward
  col_h = vertical_cols ? col_chars_w + 6 : fs + 4;
  row_w += 6;

  double title_w = 0;
  for (const AttentionPanel& p : panels) title_w = std::max(title_w, sans_width(p.title, title_fs));
  const double map_w = static_cast<double>(max_k) * cell, map_h = static_cast<double>(max_q) * cell;
  const double slot_w = std::max(row_w + map_w, title_w) + gap_x;
  const double slot_h = title_h + col_h + map_h + gap_y;
  const std::size_t per_row = std::min<std::size_t>(4, panels.size());
  const std::size_t n_rows = (panels.size() + per_row - 1) / per_row;
  const double W = std::max(2 * margin + slot_w * per_row - gap_x, sans_width(title, 16) + 220);
  const double H = header + slot_h * n_rows - gap_y + margin;

  std::string s = svg_open(W, H);
  if (!title.empty()) s += svg_text(margin, 28, title, 16, "start", "font-weight=\"bold\"");
  // A colour scale in the top right corner.
  s += "<defs><linearGradient id=\"heat\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">"
       "<stop offset=\"0\" stop-color=\"#ffffff\"/><stop offset=\"1\" stop-color=\"#08306b\"/></linearGradient></defs>\n";
  const double bar_x = W - margin - 120;
  s += fmt::format("<rect x=\"{:.1f}\" y=\"16\" width=\"120\" height=\"10\" fill=\"url(#heat)\" stroke=\"#888\"/>\n",
                   bar_x);
  s += svg_text(bar_x - 4, 25, "0", 10, "end");
  s += svg_text(bar_x + 124, 25, "1", 10, "start");
  s += svg_text(bar_x + 60, 40, "rows: queries, columns: keys", 9, "middle", "fill=\"#555\"");

  for (std::size_t n = 0; n < panels.size(); ++n) {
    const AttentionPanel& p = panels[n];
    const std::vector<std::string>& rl = rows_of(p);
    const std::vector<std::string>& cl = cols_of(p);
    const double ox = margin + slot_w * static_cast<double>(n % per_row);
    const double oy = header + slot_h * static_cast<double>(n / per_row);
    const double mx = ox + row_w, my = oy + title_h + col_h;  // the map's top-left corner
    std::size_t lq = p.weights.size(), lk = 0;
    for (const auto& row : p.weights) lk = std::max(lk, row.size());

    s += "<g>\n";
    s += svg_text(ox, oy + 13, p.title, title_fs, "start", "font-weight=\"bold\"");
    // Column labels (keys) along the top, row labels (queries) down the left.
    s += fmt::format("<g font-family=\"DejaVu Sans Mono, monospace\" font-size=\"{:g}\" fill=\"#333\">\n", fs);
    for (std::size_t j = 0; j < lk; ++j) {
      const double cx = mx + (static_cast<double>(j) + 0.5) * cell;
      const std::string text = xml_escape(label_at(cl, j));
      if (vertical_cols)
        s += fmt::format("<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" text-anchor=\"start\">{}</text>\n",
                         cx + fs * 0.35, my - 4, text);
      else
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", cx, my - 4, text);
    }
    for (std::size_t i = 0; i < lq; ++i)
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", mx - 4,
                       my + (static_cast<double>(i) + 0.5) * cell + fs * 0.35, xml_escape(label_at(rl, i)));
    s += "</g>\n";
    // The cells, each with its value on hover.
    s += "<g shape-rendering=\"crispEdges\">\n";
    for (std::size_t i = 0; i < lq; ++i)
      for (std::size_t j = 0; j < p.weights[i].size(); ++j) {
        const double v = p.weights[i][j];
        s += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:g}\" height=\"{:g}\" fill=\"{}\"><title>{} → {}: {:.3f}</title>"
            "</rect>\n",
            mx + static_cast<double>(j) * cell, my + static_cast<double>(i) * cell, cell, cell, heat_colour(v),
            xml_escape(label_at(rl, i)), xml_escape(label_at(cl, j)), v);
      }
    s += "</g>\n";
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:g}\" height=\"{:g}\" fill=\"none\" stroke=\"#666\"/>\n", mx,
                     my, static_cast<double>(lk) * cell, static_cast<double>(lq) * cell);
    s += "</g>\n";
  }
  s += "</svg>\n";
  return s;
}

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

  // Header: each column label in its 2-character cell (cut to 2 characters, padded with spaces).
  std::string out(label_w + 1, ' ');
  for (std::size_t j = 0; j < n_cols; ++j) {
    const std::string lab = utf8_prefix(j < col_labels.size() ? col_labels[j] : std::to_string(j), 2);
    out += lab + std::string(2 - utf8_length(lab), ' ');
  }
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
      out += shade;
      out += shade;
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

}  // namespace cppgrad::reverse
