#pragma once
// Writing a file so that nothing a user owns is lost: readers see either the old file or the whole new one, and
// nothing but a regular file is ever replaced.
//
//   write_file_atomically("run.safetensors", bytes);
//
// 1. The target is checked: a missing path or a regular file is fine (a symlink is followed: the file it points
//    to is replaced and the link stays); a directory, FIFO, device or socket is refused.
// 2. The bytes go to a temporary file of a unique name beside the target ("<path>.tmp.<pid>.XXXXXX"), which is
//    fsync'ed, then 3. renamed over the target, and the directory is fsync'ed so the rename itself is durable.
// On every failure the temporary file is removed. A process killed mid-write leaves its temporary file behind;
// the next write to the same path removes those of processes that no longer exist.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace cppgrad {

// True for a path that names an already open file descriptor rather than a file: /dev/stdout, /dev/stderr,
// /dev/stdin, /dev/fd/N, /proc/self/fd/N. Writing such a path means writing that descriptor (fd_path_number).
bool is_descriptor_path(const std::string& path);
int fd_path_number(const std::string& path);  // 1 for /dev/stdout, N for /dev/fd/N; -1 if not a descriptor path

// What a path names (symlinks followed), for deciding whether and how to write it.
enum class PathKind { Missing, RegularFile, Directory, Fifo, CharDevice, Other };
PathKind path_kind(const std::string& path);
const char* path_kind_name(PathKind kind);  // "a directory", "a FIFO", ...

// Throws std::runtime_error "<path>: <why>" unless write_file_atomically may write path: the target is missing or
// a regular file, its directory exists, and it is not a descriptor path (renaming over /dev/stdout would
// replace whatever file the shell redirected it to). Nothing is written.
// Also refused: a file name longer than its directory allows once the temporary file's suffix is added, and a path
// longer than PATH_MAX.
void check_atomic_target(const std::string& path);

// check_atomic_target, then what only trying tells: the temporary file a write would create beside the target is
// created and removed at once. Finds, before any work, a directory that refuses new files to everyone, root
// included, whatever its mode bits say (/proc, a read-only mount, a full disk's inodes). Throws std::runtime_error
// "<path>: <why>"; the target itself is never touched.
void check_atomic_target_by_trying(const std::string& path);

// Writes all `size` bytes to an open descriptor, however many write() calls that takes (retrying on EINTR);
// throws std::runtime_error "<name>: cannot write: <errno text>".
void write_all(int fd, const void* data, std::size_t size, const std::string& name);

// Receives the file's bytes in pieces; each call appends.
using ByteSink = std::function<void(const void* data, std::size_t size)>;

// Steps 1-3 above; `produce` writes the content through the sink it is given. Throws std::runtime_error
// "<path>: <what failed>: <errno text>"; an exception from `produce` leaves the old file as it was.
void write_file_atomically(const std::string& path, const std::function<void(const ByteSink&)>& produce);
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace cppgrad
