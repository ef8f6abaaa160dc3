#pragma once
// The stream of a run's metrics (and of any other JSON Lines log): a file that grows as training runs, always
// complete on disk, or a FIFO or terminal that receives each line once. Its path is checked first (outputs.h).
#include <cstddef>
#include <string>

namespace cppgrad::train {

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

}  // namespace cppgrad::train
