// The parity runner can fail: copies of the softmax golden case, each corrupted in one way, are written to a
// temporary directory and `cppgrad_parity --dir TMP` must exit non-zero (and say why). An unmodified copy must
// pass, so a non-zero exit is the corruption's doing and not, say, a wrong path.
//
// Built as its own binary (not part of cppgrad_tests, whose glob leaves out "parity"): CMake passes the runner's
// path as CPPGRAD_PARITY_BIN and the golden directory as CPPGRAD_DEFAULT_GOLDEN_DIR.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "test_paths.h"

namespace cppgrad {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

using test::golden_dir;
using test::TempDir;

struct RunResult {
  int exit_code;       // -1 when the runner did not exit normally
  std::string output;  // its stdout and stderr together
};

// Runs the parity binary with `args` (no shell), its output captured in a file of `dir`.
RunResult run_parity(const std::vector<std::string>& args, const fs::path& log_path) {
  std::vector<std::string> argv_s = {CPPGRAD_PARITY_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return {-1, "fork failed"};
  if (pid == 0) {
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) ::_exit(126);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);  // exec failed
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  std::ifstream in(log_path);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class ParityDetectsMismatch : public testing::Test {
 protected:
  void SetUp() override {
    case_dir_ = tmp_.path / "cases";
    fs::create_directory(case_dir_);
    softmax_ = read_safetensors((golden_dir() / "softmax.safetensors").string());
  }

  // Writes `file` as the only case of the directory and runs the runner on it in float64.
  RunResult run_with(const SafetensorsFile& file) {
    write_safetensors((case_dir_ / "softmax.safetensors").string(), file.tensors, file.metadata);
    return run_parity({"--dtype", "float64", "--dir", case_dir_.string()}, tmp_.path / "log.txt");
  }

  // A fresh copy of the tensors (perturbing one must not touch softmax_).
  SafetensorsFile copy() const {
    SafetensorsFile out{{}, softmax_.metadata};
    for (const auto& [name, t] : softmax_.tensors) out.tensors[name] = t.clone();
    return out;
  }

  TempDir tmp_;
  fs::path case_dir_;
  SafetensorsFile softmax_;
};

TEST_F(ParityDetectsMismatch, UnmodifiedCopyPasses) {
  const RunResult r = run_with(copy());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[parity] softmax.safetensors:")) << r.output;
}

TEST_F(ParityDetectsMismatch, OutputOffByOneMillionthFails) {
  SafetensorsFile f = copy();
  const Tensor& y = f.tensors.at("output.output");
  y.set({1, 2, 3}, y.at({1, 2, 3}) + 1e-6);
  const RunResult r = run_with(f);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("softmax.safetensors: output.output: 1 of 30 elements outside")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("flat index 28 [1, 2, 3]")) << r.output;
}

TEST_F(ParityDetectsMismatch, GradientOffByOneMillionthFails) {
  SafetensorsFile f = copy();
  const Tensor& g = f.tensors.at("grad.input.input");
  g.set({0, 0, 0}, g.at({0, 0, 0}) - 1e-6);
  const RunResult r = run_with(f);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("grad.input.input: 1 of 30 elements outside")) << r.output;
}

TEST_F(ParityDetectsMismatch, EntryNoHandlerComparesFails) {
  SafetensorsFile f = copy();
  f.tensors["output.extra"] = f.tensors.at("output.output").clone();
  const RunResult r = run_with(f);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("'output.extra' was never compared")) << r.output;
}

TEST_F(ParityDetectsMismatch, UnknownKindFails) {
  SafetensorsFile f = copy();
  f.metadata["kind"] = "no_such_kind";
  const RunResult r = run_with(f);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("softmax.safetensors: unknown kind 'no_such_kind'")) << r.output;
}

TEST_F(ParityDetectsMismatch, MissingDirectoryFails) {
  const RunResult r = run_parity({"--dir", (tmp_.path / "does_not_exist").string()}, tmp_.path / "log.txt");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("does not exist")) << r.output;
}

}  // namespace
}  // namespace cppgrad
