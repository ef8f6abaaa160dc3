#pragma once
// A one-line progress bar for a training loop, redrawn in place on a terminal.
#include <cstdint>
#include <cstdio>
#include <string>

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

}  // namespace cppgrad::train
