#include "train/plot/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

namespace cppgrad::train {

namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

constexpr double kRedrawInterval = 0.05;  // at most ~20 redraws per second
constexpr int kBarWidth = 20;

int digits(std::int64_t v) { return static_cast<int>(fmt::formatted_size("{}", v)); }

}  // namespace

ProgressBar::ProgressBar(std::FILE* out, std::string label, std::int64_t total, std::string rate_unit)
    : out_(out), label_(std::move(label)), total_(total), rate_unit_(std::move(rate_unit)), tty_(is_terminal(out)),
      start_s_(now_seconds()) {}

bool ProgressBar::is_terminal(std::FILE* out) { return out != nullptr && ::isatty(::fileno(out)) == 1; }

void ProgressBar::update(std::int64_t done, double loss, double rate) {
  if (!tty_) return;
  const bool final_step = total_ > 0 && done >= total_;
  const double now = now_seconds();
  if (!final_step && last_draw_s_ >= 0 && now - last_draw_s_ < kRedrawInterval) return;
  last_draw_s_ = now;
  drawn_ = true;

  // [=========>          ]: `filled` cells, the last one an arrow until the run is complete.
  std::string bar(kBarWidth, ' ');
  if (total_ > 0) {
    const std::int64_t clamped = std::clamp<std::int64_t>(done, 0, total_);
    const int filled = static_cast<int>(clamped * kBarWidth / total_);
    for (int i = 0; i < filled; ++i) bar[i] = '=';
    if (!final_step && filled > 0) bar[filled - 1] = '>';
  }
  const int w = digits(std::max<std::int64_t>(total_, 0));
  std::string line = fmt::format("{} [{}] {:>{}}/{}  loss {:.4f}  {:.{}f} {}", label_, bar, done, w, total_, loss, rate,
                                 rate >= 1000 ? 0 : 1, rate_unit_);
  std::fputs("\r", out_);
  std::fputs(line.c_str(), out_);
  std::fputs("\x1b[K", out_);  // clear whatever a longer previous line left behind
  std::fflush(out_);
}

void ProgressBar::tick(std::int64_t done, double loss, std::int64_t first) {
  if (tty_) update(done, loss, static_cast<double>(done - first) / std::max(now_seconds() - start_s_, 1e-9));
}

void ProgressBar::finish() {
  if (!tty_ || !drawn_) return;
  drawn_ = false;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  last_draw_s_ = -1;
}

}  // namespace cppgrad::train
