#include "train/lines_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/atomic_file.h"
#include "train/outputs.h"

namespace cppgrad::train {

LinesOutput::LinesOutput(std::string path, Kind kind) : path_(std::move(path)) {
  // /dev/stdout and friends: write the descriptor this process already has, wherever the shell pointed it.
  if (const int fd = fd_path_number(path_); fd >= 0) {
    fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0) throw std::runtime_error(path_ + ": cannot write to it: " + std::strerror(errno));
    return;
  }
  const bool stream = is_stream_path(path_);
  if (!stream && kind == Kind::Whole) return;  // written atomically, whole, each time
  fd_ = stream ? ::open(path_.c_str(), O_WRONLY | O_CLOEXEC)
               : ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) throw std::runtime_error(path_ + ": cannot open it for writing: " + std::strerror(errno));
}

LinesOutput::~LinesOutput() {
  if (fd_ >= 0) ::close(fd_);
}

void LinesOutput::write(const std::string& content) {
  if (fd_ < 0) {
    write_file_atomically(path_, content);
    return;
  }
  if (content.size() > written_) write_all(fd_, content.data() + written_, content.size() - written_, path_);
  written_ = content.size();
}

void LinesOutput::append(const std::string& lines) {
  if (fd_ < 0) throw std::logic_error("LinesOutput::append: " + path_ + " was opened as a whole file, not a log");
  write_all(fd_, lines.data(), lines.size(), path_);
}

}  // namespace cppgrad::train
