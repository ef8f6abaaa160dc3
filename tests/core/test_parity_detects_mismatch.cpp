// The parity runner can fail: copies of a case from the golden directory in use (the committed tests/golden, or
// $CPPGRAD_GOLDEN_DIR), each corrupted in one way, are written to a temporary directory and
// `cppgrad_parity --dir TMP` must exit non-zero (and say why). An unmodified copy must pass, so a non-zero exit is
// the corruption's doing and not, say, a wrong path.
//
// Built as its own binary (not part of cppgrad_tests, whose glob leaves out "parity"): CMake passes the runner's
// path as CPPGRAD_PARITY_BIN and the golden directory as CPPGRAD_DEFAULT_GOLDEN_DIR.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
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

// A case of the golden directory in use: the first file, in name order, with a differentiated output (one that
// has an upstream gradient) and a gradient with respect to an input. Every expectation below is derived from it.
struct ChosenCase {
  fs::path file;
  SafetensorsFile contents;
  std::string output;    // "output.Y"
  std::string gradient;  // "grad.input.X"
};

ChosenCase choose_case(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    ChosenCase c{f, read_safetensors(f.string()), "", ""};
    for (const auto& [name, t] : c.contents.tensors) {
      if (name.rfind("output.", 0) == 0 && c.output.empty() && t.numel() > 1 &&
          c.contents.tensors.count("upstream." + name.substr(7)))
        c.output = name;
      if (name.rfind("grad.input.", 0) == 0 && c.gradient.empty() && t.numel() > 0) c.gradient = name;
    }
    if (!c.output.empty() && !c.gradient.empty()) return c;
  }
  throw std::runtime_error("no golden case in " + dir.string() + " has a differentiated output and an input gradient");
}

// "[1, 2, 3]": the row-major multi-index of flat element i.
std::string multi_index(std::int64_t i, const Shape& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) idx[d] = i % shape[d], i /= shape[d];
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

class ParityDetectsMismatch : public testing::Test {
 protected:
  void SetUp() override {
    case_dir_ = tmp_.path / "cases";
    fs::create_directory(case_dir_);
    chosen_ = choose_case(golden_dir());
    name_ = chosen_.file.filename().string();
  }

  // Writes `file` as the only case of the directory and runs the runner on it in float64.
  RunResult run_with(const SafetensorsFile& file) {
    write_safetensors((case_dir_ / name_).string(), file.tensors, file.metadata);
    return run_parity({"--dtype", "float64", "--dir", case_dir_.string()}, tmp_.path / "log.txt");
  }

  // A fresh copy of the tensors (perturbing one must not touch the chosen case).
  SafetensorsFile copy() const {
    SafetensorsFile out{{}, chosen_.contents.metadata};
    for (const auto& [name, t] : chosen_.contents.tensors) out.tensors[name] = t.clone();
    return out;
  }

  // Moves flat element i of `name` in f by a thousand times the float64 tolerance (1e-10 + 1e-9 |v|) at that
  // value: far outside it, yet small enough to disturb nothing else.
  static void perturb(SafetensorsFile& f, const std::string& name, std::int64_t i) {
    Tensor t = f.tensors.at(name).reshape({-1});
    const double v = t.at({i});
    t.set({i}, v + 1000 * (1e-10 + 1e-9 * std::abs(v)));
  }

  TempDir tmp_;
  fs::path case_dir_;
  ChosenCase chosen_;
  std::string name_;
};

TEST_F(ParityDetectsMismatch, UnmodifiedCopyPasses) {
  const RunResult r = run_with(copy());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("[parity] " + name_ + ":")) << r.output;
}

TEST_F(ParityDetectsMismatch, OutputOffByAThousandTolerancesFails) {
  SafetensorsFile f = copy();
  const Tensor& y = f.tensors.at(chosen_.output);
  const std::int64_t i = y.numel() / 2;  // an element in the middle
  perturb(f, chosen_.output, i);
  const RunResult r = run_with(f);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(name_ + ": " + chosen_.output + ": 1 of " + std::to_string(y.numel()) +
                                  " elements outside")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("flat index " + std::to_string(i) + " " + multi_index(i, y.shape()))) << r.output;
}

TEST_F(ParityDetectsMismatch, GradientOffByAThousandTolerancesFails) {
  SafetensorsFile f = copy();
  const Tensor& g = f.tensors.at(chosen_.gradient);
  perturb(f, chosen_.gradient, 0);
  const RunResult r = run_with(f);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(name_ + ": " + chosen_.gradient + ": 1 of " + std::to_string(g.numel()) +
                                  " elements outside")) << r.output;
}

TEST_F(ParityDetectsMismatch, EntryNoHandlerComparesFails) {
  SafetensorsFile f = copy();
  f.tensors["output.extra"] = f.tensors.at(chosen_.output).clone();
  const RunResult r = run_with(f);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("'output.extra' was never compared")) << r.output;
}

TEST_F(ParityDetectsMismatch, UnknownKindFails) {
  SafetensorsFile f = copy();
  f.metadata["kind"] = "no_such_kind";
  const RunResult r = run_with(f);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(name_ + ": unknown kind 'no_such_kind'")) << r.output;
}

TEST_F(ParityDetectsMismatch, MissingDirectoryFails) {
  const RunResult r = run_parity({"--dir", (tmp_.path / "does_not_exist").string()}, tmp_.path / "log.txt");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("does not exist")) << r.output;
}

}  // namespace
}  // namespace cppgrad
