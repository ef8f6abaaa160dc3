#include "reverse/outputs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/atomic_file.h"

namespace cppgrad::reverse {

namespace fs = std::filesystem;

namespace {

bool is_stream(PathKind kind) { return kind == PathKind::Fifo || kind == PathKind::CharDevice; }

void check_one(const OutputFlag& out) {
  if (out.path.empty()) throw std::invalid_argument(out.flag + " needs a path, got ''");
  if (out.stream && (is_descriptor_path(out.path) || is_stream(path_kind(out.path)))) return;
  try {
    check_atomic_target(out.path);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(out.flag + " " + e.what());
  }
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ra = fs::weakly_canonical(fs::absolute(a), ea), rb = fs::weakly_canonical(fs::absolute(b), eb);
  return !ea && !eb && ra == rb;
}

void check_outputs(const std::vector<OutputFlag>& outputs, const std::string& resume) {
  for (const OutputFlag& out : outputs) check_one(out);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (same_file(outputs[i].path, outputs[j].path))
        throw std::invalid_argument(outputs[i].flag + " " + outputs[i].path + " and " + outputs[j].flag + " " +
                                    outputs[j].path + " name the same file: give each output its own path");
    if (!resume.empty() && outputs[i].flag != "--save" && same_file(outputs[i].path, resume))
      throw std::invalid_argument(outputs[i].flag + " " + outputs[i].path + " names the checkpoint being resumed (" +
                                  resume + "): it would be overwritten");
  }
}

LinesOutput::LinesOutput(std::string path, Kind kind) : path_(std::move(path)) {
  // /dev/stdout and friends: write the descriptor this process already has, wherever the shell pointed it.
  if (const int fd = fd_path_number(path_); fd >= 0) {
    fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0) throw std::runtime_error(path_ + ": cannot write to it: " + std::strerror(errno));
    return;
  }
  const bool stream = is_stream(path_kind(path_));
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

}  // namespace cppgrad::reverse
