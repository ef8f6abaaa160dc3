#pragma once
// Where tests find the golden cases and put their scratch files. No dependency beyond the standard library, so
// every test binary can use it.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

namespace cppgrad::test {

// The PyTorch-written cases: $CPPGRAD_GOLDEN_DIR if set, else the committed tests/golden.
inline std::filesystem::path golden_dir() {
  if (const char* env = std::getenv("CPPGRAD_GOLDEN_DIR"); env && *env) return env;
  return CPPGRAD_DEFAULT_GOLDEN_DIR;
}

// A fresh directory under the system temp dir, removed with everything in it when the test ends.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    do {
      path = std::filesystem::temp_directory_path() /
             ("cppgrad_test_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    } while (!std::filesystem::create_directory(path));
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace cppgrad::test
