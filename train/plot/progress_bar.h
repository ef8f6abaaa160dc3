#pragma once
// A one-line progress bar for a training loop, redrawn in place on a terminal.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

namespace cppgrad::train {

// Redrawn in place when `out` is a terminal; when it is not (a pipe, a log file) it prints nothing per step, so
// logs stay clean, and the caller's epoch line is the record.
//   epoch  3/30 [=========>          ] 41/79  loss 0.4312  512.3 steps/s
class ProgressBar {
 public:
  // rate_unit: what update()'s rate counts, e.g. "tokens/s" (a language model's throughput)
  ProgressBar(std::FILE* out, std::string label, std::int64_t total, std::string rate_unit = "steps/s");
  ~ProgressBar() { finish(); }  // a bar left on the line by an exception is cleared, so its message reads cleanly
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void update(std::int64_t done, double loss, double rate);
  // update() at the rate the bar measures: (done - first) steps over the seconds since it was made (first: the steps
  // done before, e.g. by the checkpoint a run resumed mid-epoch).
  void tick(std::int64_t done, double loss, std::int64_t first = 0);
  void finish();  // clears the line (terminal) so the epoch summary can be printed in its place
  static bool is_terminal(std::FILE* out);

 private:
  std::FILE* out_;
  std::string label_;
  std::int64_t total_;
  std::string rate_unit_;
  bool tty_;
  double last_draw_s_ = -1;
  bool drawn_ = false;  // a bar is on the line: finish() clears it (and only then)
  double start_s_;      // when the bar was made, for tick()'s rate
};

// The bar of work whose size is known only when it first reports (an evaluation's chunks): report(done, total, loss)
// makes the bar at the first call, and its rate counts from the end of that first piece. Like ProgressBar, it draws
// on a terminal only.
class ProgressBarFromFirstReport {
 public:
  ProgressBarFromFirstReport(std::FILE* out, std::string label, std::string rate_unit)
      : out_(out), label_(std::move(label)), rate_unit_(std::move(rate_unit)) {}
  void report(std::int64_t done, std::int64_t total, double loss) {
    if (!bar_) bar_.emplace(out_, label_, total, rate_unit_);
    bar_->tick(done, loss, /*first=*/1);
  }
  void finish() { bar_.reset(); }  // clears the line; the next report starts a new bar

 private:
  std::FILE* out_;
  std::string label_, rate_unit_;
  std::optional<ProgressBar> bar_;
};

}  // namespace cppgrad::train
