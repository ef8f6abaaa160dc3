#include "core/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace cppgrad {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err = 0) {
  throw std::runtime_error(path + ": " + what + (err ? std::string(": ") + std::strerror(err) : ""));
}

// The file a write to `path` lands in: symlinks resolved, so the link survives and its target is replaced.
std::string resolved_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::weakly_canonical(path, ec);
    if (!ec) return target.string();
  }
  return path;
}

std::string directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Temporary files "<name>.tmp.<pid>.XXXXXX" beside `path` whose process is gone: left by a killed writer.
void remove_stale_temporaries(const std::string& path) {
  const std::string dir = directory_of(path), prefix = fs::path(path).filename().string() + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // "<pid>.XXXXXX"
    const std::size_t dot = rest.find('.');
    if (dot == std::string::npos || dot == 0 || rest.size() - dot != 7) continue;
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end != rest.c_str() + dot || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(dir + "/" + name);
  }
  ::closedir(d);
  for (const std::string& f : stale) ::unlink(f.c_str());
}

// What a temporary file's name adds to its target's: ".tmp.<pid>.XXXXXX", at most this many bytes (a pid has at
// most 10 digits).
constexpr std::size_t kTemporarySuffixBytes = 5 + 10 + 7;
std::string temporary_suffix() { return ".tmp." + std::to_string(::getpid()) + ".XXXXXX"; }

// A temporary file that removes itself unless committed.
struct TemporaryFile {
  std::string path;
  int fd = -1;
  bool committed = false;
  ~TemporaryFile() {
    if (fd >= 0) ::close(fd);
    if (!committed && !path.empty()) ::unlink(path.c_str());
  }
};

mode_t default_file_mode() {
  const mode_t mask = ::umask(0);  // there is no way to read the umask without setting it
  ::umask(mask);
  return 0666 & ~mask;
}

void fsync_directory(const std::string& target, const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(target, "cannot open its directory " + dir + " to sync it", errno);
  // Some file systems cannot sync a directory (EINVAL); the rename has happened, which is the best they offer.
  const int rc = ::fsync(fd), err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) fail(target, "fsync of directory " + dir + " failed", err);
}

}  // namespace

int fd_path_number(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size() || path.size() > prefix.size() + 9) continue;
    const std::string digits = path.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") == std::string::npos) return std::stoi(digits);
  }
  return -1;
}

bool is_descriptor_path(const std::string& path) { return fd_path_number(path) >= 0; }

PathKind path_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return PathKind::Missing;
  if (S_ISREG(st.st_mode)) return PathKind::RegularFile;
  if (S_ISDIR(st.st_mode)) return PathKind::Directory;
  if (S_ISFIFO(st.st_mode)) return PathKind::Fifo;
  if (S_ISCHR(st.st_mode)) return PathKind::CharDevice;
  return PathKind::Other;
}

const char* path_kind_name(PathKind kind) {
  switch (kind) {
    case PathKind::Missing: return "missing";
    case PathKind::RegularFile: return "a regular file";
    case PathKind::Directory: return "a directory";
    case PathKind::Fifo: return "a FIFO";
    case PathKind::CharDevice: return "a character device";
    case PathKind::Other: return "not a regular file";
  }
  return "not a regular file";
}

void check_atomic_target(const std::string& path) {
  if (path.empty()) fail("''", "an empty path names no file");
  if (is_descriptor_path(path)) fail(path, "refusing to replace it: it names an open file descriptor, not a file");
  const std::string target = resolved_target(path);
  if (target.size() + kTemporarySuffixBytes >= PATH_MAX)
    fail(path, "the path is " + std::to_string(target.size()) + " bytes, more than the " +
                   std::to_string(PATH_MAX - 1 - kTemporarySuffixBytes) + " a path to write may have");
  const PathKind kind = path_kind(target);
  if (kind != PathKind::Missing && kind != PathKind::RegularFile)
    fail(path, std::string("refusing to replace it: it is ") + path_kind_name(kind) + ", not a regular file");
  const std::string dir = directory_of(target);
  if (path_kind(dir) != PathKind::Directory) fail(path, "its directory " + dir + " does not exist");
  // The temporary file beside the target has the longer name: "<name>.tmp.<pid>.XXXXXX".
  const long limit = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::size_t name_max = limit > 0 ? static_cast<std::size_t>(limit) : NAME_MAX;
  const std::size_t name = fs::path(target).filename().string().size();
  if (name > name_max)
    fail(path, "its file name is " + std::to_string(name) + " bytes, more than the " + std::to_string(name_max) +
                   " a file name may have in " + dir);
  if (name + kTemporarySuffixBytes > name_max)
    fail(path, "its file name is " + std::to_string(name) + " bytes: with the " +
                   std::to_string(kTemporarySuffixBytes) +
                   " of the temporary file written beside it (<name>.tmp.<pid>.XXXXXX) it is more than the " +
                   std::to_string(name_max) +
                   " a file name may have in " + dir + "; give a name of at most " +
                   std::to_string(name_max - kTemporarySuffixBytes) + " bytes");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) fail(path, "cannot create files in its directory " + dir, errno);
}

void check_atomic_target_by_trying(const std::string& path) {
  check_atomic_target(path);
  const std::string target = resolved_target(path), dir = directory_of(target);
  std::string name = target + temporary_suffix();
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) fail(path, "cannot create files in its directory " + dir, errno);
  ::close(fd);
  ::unlink(name.c_str());
}

void write_all(int fd, const void* data, std::size_t size, const std::string& name) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(name, "cannot write", errno);
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void write_file_atomically(const std::string& path, const std::function<void(const ByteSink&)>& produce) {
  check_atomic_target(path);
  const std::string target = resolved_target(path), dir = directory_of(target);
  remove_stale_temporaries(target);

  TemporaryFile tmp;
  std::string name = target + temporary_suffix();
  tmp.fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (tmp.fd < 0) fail(path, "cannot create a temporary file in " + dir, errno);
  tmp.path = name;
  struct stat old {};
  const mode_t mode = ::stat(target.c_str(), &old) == 0 ? (old.st_mode & 07777) : default_file_mode();
  if (::fchmod(tmp.fd, mode) != 0) fail(path, "cannot set the mode of " + tmp.path, errno);

  produce([&](const void* data, std::size_t size) { write_all(tmp.fd, data, size, path); });
  // Unbuffered write() calls leave nothing in user space to flush; fsync pushes the kernel's copy to disk.
  if (::fsync(tmp.fd) != 0) fail(path, "fsync of " + tmp.path + " failed", errno);
  const int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0) fail(path, "cannot close " + tmp.path, errno);
  if (::rename(tmp.path.c_str(), target.c_str()) != 0) fail(path, "cannot rename " + tmp.path + " over it", errno);
  tmp.committed = true;
  fsync_directory(path, dir);
}

void write_file_atomically(const std::string& path, std::string_view content) {
  write_file_atomically(path, [&](const ByteSink& sink) { sink(content.data(), content.size()); });
}

}  // namespace cppgrad
