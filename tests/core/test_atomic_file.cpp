// write_file_atomically: the one way cppgrad writes a whole file (checkpoints, plots, graphs, metrics). It
// replaces only a regular file, leaves no temporary file behind, and follows a symlink to replace its target.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "test_paths.h"
#include "test_util.h"

namespace cppgrad {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFile, WritesAndOverwritesLeavingNoTemporaryFile) {
  TempDir dir;
  const std::string path = (dir.path / "out.txt").string();
  write_file_atomically(path, "first");
  write_file_atomically(path, "second, longer");
  EXPECT_EQ(slurp(path), "second, longer");
  EXPECT_EQ(entries(dir.path), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, KeepsTheModeOfTheFileItReplaces) {
  TempDir dir;
  const std::string path = (dir.path / "out.txt").string();
  write_file_atomically(path, "x");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  write_file_atomically(path, "y");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(AtomicFile, RefusesADirectoryAndLeavesItAlone) {
  TempDir dir;
  fs::create_directories(dir.path / "taken");
  const std::string path = (dir.path / "taken").string();
  EXPECT_THROW_MSG(write_file_atomically(path, "x"), std::runtime_error, path + ": refusing to replace it: it is a directory");
  EXPECT_TRUE(fs::is_directory(path));
  EXPECT_EQ(entries(dir.path), std::vector<std::string>{"taken"});
}

TEST(AtomicFile, RefusesAFifoAndACharacterDevice) {
  TempDir dir;
  const std::string fifo = (dir.path / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW_MSG(write_file_atomically(fifo, "x"), std::runtime_error, "it is a FIFO, not a regular file");
  EXPECT_TRUE(fs::is_fifo(fifo)) << "the FIFO must not be replaced by a regular file";
  EXPECT_THROW_MSG(write_file_atomically("/dev/null", "x"), std::runtime_error, "it is a character device");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(AtomicFile, RefusesADescriptorPath) {
  // Renaming over /dev/stdout would replace the file the shell redirected stdout to, not write into it.
  for (const char* path : {"/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/2"})
    EXPECT_THROW_MSG(write_file_atomically(path, "x"), std::runtime_error, "it names an open file descriptor");
  EXPECT_EQ(fd_path_number("/dev/fd/12"), 12);
  EXPECT_EQ(fd_path_number("/dev/fdx"), -1);
  EXPECT_EQ(fd_path_number("/dev/fd/1x"), -1);
}

TEST(AtomicFile, RefusesAMissingDirectoryOrAnEmptyPath) {
  TempDir dir;
  const std::string path = (dir.path / "no" / "such" / "out.svg").string();
  EXPECT_THROW_MSG(write_file_atomically(path, "x"), std::runtime_error, path + ": its directory");
  EXPECT_FALSE(fs::exists(dir.path / "no"));
  EXPECT_THROW_MSG(write_file_atomically("", "x"), std::runtime_error, "an empty path names no file");
}

TEST(AtomicFile, RefusesANameTooLongForItsTemporaryFileBeforeWriting) {
  TempDir dir;
  const std::string too_long = (dir.path / std::string(300, 'x')).string();
  EXPECT_THROW_MSG(check_atomic_target(too_long), std::runtime_error, "its file name is 300 bytes, more than the 255");
  // A name that fits, but not with the ".tmp.<pid>.XXXXXX" of the file written first beside it.
  const std::string near = (dir.path / std::string(240, 'y')).string();
  EXPECT_THROW_MSG(write_file_atomically(near, "x"), std::runtime_error, "give a name of at most 233 bytes");
  const std::string fits = (dir.path / std::string(233, 'z')).string();
  write_file_atomically(fits, "x");
  EXPECT_EQ(slurp(fits), "x");
  EXPECT_THROW_MSG(check_atomic_target(std::string(5000, 'p')), std::runtime_error, "the path is 5000 bytes");
}

TEST(AtomicFile, TryingFindsADirectoryThatTakesNoFileAndLeavesNothingBehind) {
  // root passes access(W_OK) on /proc; creating a file there fails for everyone.
  EXPECT_THROW_MSG(check_atomic_target_by_trying("/proc/version"), std::runtime_error,
                   "/proc/version: cannot create files in its directory /proc");
  TempDir dir;
  write_file_atomically((dir.path / "kept.txt").string(), "kept");
  check_atomic_target_by_trying((dir.path / "new.txt").string());
  check_atomic_target_by_trying((dir.path / "kept.txt").string());
  EXPECT_EQ(entries(dir.path), std::vector<std::string>{"kept.txt"});
  EXPECT_EQ(slurp(dir.path / "kept.txt"), "kept");
}

TEST(AtomicFile, FollowsASymlinkAndKeepsIt) {
  TempDir dir;
  const fs::path target = dir.path / "real.txt", link = dir.path / "link.txt";
  write_file_atomically(target.string(), "old");
  fs::create_symlink(target, link);
  write_file_atomically(link.string(), "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "new");
}

TEST(AtomicFile, AFailingProducerLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const std::string path = (dir.path / "out.txt").string();
  write_file_atomically(path, "good");
  EXPECT_THROW(write_file_atomically(path,
                                     [](const ByteSink& sink) {
                                       sink("partial", 7);
                                       throw std::runtime_error("producer failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(slurp(path), "good");
  EXPECT_EQ(entries(dir.path), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, RemovesTemporariesOfDeadWritersButNotOfLiveOnes) {
  TempDir dir;
  const std::string path = (dir.path / "ckpt").string();
  // pid 2^22 + 1 is above Linux's largest pid (pid_max is at most 2^22), so no process has it.
  const std::string dead = path + ".tmp.4194305.AbC123", live = path + ".tmp." + std::to_string(::getpid()) + ".XyZ789";
  std::ofstream(dead) << "stale";
  std::ofstream(live) << "in use";
  write_file_atomically(path, "x");
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
}

}  // namespace
}  // namespace cppgrad
