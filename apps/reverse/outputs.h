#pragma once
// The files a run writes, checked before it starts, so that no flag can destroy what a user owns:
//   - files written whole (checkpoints, plots, graphs) go through write_file_atomically, which replaces only a
//     regular file;
//   - streams (metrics, gradient log) may also go straight into a FIFO or a terminal (/dev/stdout), where each
//     new line is written once, in order;
//   - two outputs never name one file (after resolving symlinks and hard links), and no output names the
//     checkpoint being resumed, except --save itself.
#include <string>
#include <utility>
#include <vector>

namespace cppgrad::reverse {

// A flag and the path it names, e.g. {"--save", "run.safetensors"}.
struct OutputFlag {
  std::string flag;
  std::string path;
  bool stream = false;  // metrics and gradient log: a FIFO or a character device is allowed too
};

// Throws std::invalid_argument "<flag> <path>: <why>" (a usage error) for an empty path, a target that cannot be
// written (a directory, a FIFO for a file written whole, a missing directory), or two flags naming one file;
// `resume` (may be empty) is the checkpoint read at the start, which only --save may name.
void check_outputs(const std::vector<OutputFlag>& outputs, const std::string& resume = "");

// True when a and b name the same file: the same inode if both exist, else the same resolved path.
bool same_file(const std::string& a, const std::string& b);

// A JSON Lines output that grows as training runs.
//   Whole (metrics): write(all lines so far) replaces a regular file atomically, so it is always complete.
//   Log (gradient log): a regular file is truncated when opened, then each append() adds to it.
// Into a FIFO or a terminal (/dev/stdout) either kind writes each line once, in order.
class LinesOutput {
 public:
  enum class Kind { Whole, Log };
  LinesOutput(std::string path, Kind kind);
  ~LinesOutput();
  LinesOutput(const LinesOutput&) = delete;
  LinesOutput& operator=(const LinesOutput&) = delete;

  void write(const std::string& content);  // Whole: the content so far (it only ever grows)
  void append(const std::string& lines);   // Log: more lines
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;              // open for a stream, or for a log
  std::size_t written_ = 0;  // Whole into a stream: bytes of the content already sent
};

}  // namespace cppgrad::reverse
