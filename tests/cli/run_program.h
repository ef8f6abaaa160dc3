#pragma once
// Runs one of the programs as a user would, through the shell: its exit status and everything it printed
// (standard output and standard error together). Also what a training run leaves behind, to compare two runs.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/safetensors.h"

namespace cppgrad::test {

struct ProgramResult {
  int status;  // the exit status, or -1 when the program did not exit normally
  std::string out;
};

inline ProgramResult run_program(const std::string& binary, const std::string& args) {
  const std::string cmd = "'" + binary + "' " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

// The same without a shell, standard output and standard error on a pseudo-terminal: what a user at a terminal sees,
// progress bars included (a program draws them only on a terminal). The terminal turns each "\n" into "\r\n".
inline ProgramResult run_program_in_terminal(const std::string& binary, std::vector<std::string> args) {
  const int terminal = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (terminal < 0 || ::grantpt(terminal) != 0 || ::unlockpt(terminal) != 0) return {-1, "no pseudo-terminal"};
  const std::string program_side = ::ptsname(terminal);
  args.insert(args.begin(), binary);
  std::vector<char*> argv;  // built before fork: the child only opens, duplicates and executes
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();  // a session of its own, so the pseudo-terminal becomes its terminal
    const int fd = ::open(program_side.c_str(), O_RDWR);
    if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0) ::_exit(126);
    ::close(fd);
    ::close(terminal);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  for (;;) {  // until the program's side is closed (read then fails with EIO): everything it wrote
    const ssize_t n = ::read(terminal, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;
  }
  ::close(terminal);
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

// A program's exit status (128 + the signal's number when a signal ended it) and its two streams, kept apart.
struct CliResult {
  int status = -1;
  std::string out, err;
};

// A whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Runs `binary` with args through the shell, each argument quoted, as a user types it; standard output and standard
// error go to dir/stdout.txt and dir/stderr.txt. `env` ("NAME=value ") goes before the program.
inline CliResult run_cli(const std::string& binary, const std::vector<std::string>& args,
                         const std::filesystem::path& dir, const std::string& env = "") {
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::string cmd = env + "'" + binary + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(out), slurp(err)};
}

// A usage error as the programs give one: exit 2 and one line on stderr that holds `message`.
inline void expect_usage_error(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr(message));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line, not a stack trace:\n" << r.err;
}


// An empty directory of its own for the running test: <tmp>/<prefix>_<pid>_<test name>, removed first if it exists.
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (prefix + "_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Starts `binary` with args in the background (no shell), its standard output and error going to the file `out`;
// returns its pid, for a test that signals it (kill) and waits for it (waitpid).
inline pid_t start_program(const char* binary, const std::vector<std::string>& args, const std::string& out) {
  const pid_t child = fork();
  if (child == 0) {
    std::vector<std::string> copy = args;
    std::vector<char*> argv = {const_cast<char*>(binary)};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!freopen(out.c_str(), "w", stdout) || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(126);
    execv(binary, argv.data());
    _exit(127);
  }
  return child;
}

// A program's run with what it cost: its status and streams as run_cli gives them, its peak resident memory and the
// CPU time it used (the kernel's own accounting of the child, through wait4), for tests that hold a refusal to a
// bound in memory and time, as a user's machine would feel it.
struct MeasuredResult : CliResult {
  double peak_mib = 0;      // ru_maxrss
  double cpu_seconds = 0;   // user + system
};

inline MeasuredResult run_measured(const std::string& binary, const std::vector<std::string>& args,
                                   const std::filesystem::path& dir) {
  const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
  std::vector<std::string> copy = args;
  copy.insert(copy.begin(), binary);
  std::vector<char*> argv;  // built before fork: the child only opens, duplicates and executes
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  int raw = 0;
  rusage usage{};
  while (::wait4(child, &raw, 0, &usage) < 0 && errno == EINTR) {
  }
  MeasuredResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  r.peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  r.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return r;
}

// What refusing (or reading, when valid) a hostile input may cost: the bound every reader keeps (fuzz/README.md;
// the fuzzers hold it through libFuzzer's limits). A sanitizer build's shadow memory and checks are not the
// program's own cost: there the bounds are not held (the Release suite holds them).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kCostIsMeasurable = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kCostIsMeasurable = false;
#else
inline constexpr bool kCostIsMeasurable = true;
#endif
#else
inline constexpr bool kCostIsMeasurable = true;
#endif
inline constexpr double kHostileInputMaxMiB = 200, kHostileInputMaxCpuSeconds = 2;

inline void expect_cheap(const MeasuredResult& r, const std::string& what) {
  if (!kCostIsMeasurable) return;
  EXPECT_LT(r.peak_mib, kHostileInputMaxMiB) << what << ": peak RSS " << r.peak_mib << " MiB";
  EXPECT_LT(r.cpu_seconds, kHostileInputMaxCpuSeconds) << what << ": " << r.cpu_seconds << " s of CPU";
}

// What a training run leaves behind, for comparing two runs that must end alike (an unbroken one and one stopped and
// resumed): every tensor of its checkpoint, and every line of its metrics stream (JSON lines) without the keys that
// measure time, which no two runs share.
struct Outcome {
  std::map<std::string, std::vector<double>> weights;  // the checkpoint's tensors by name
  std::vector<std::string> metrics;                    // one JSON object a line, re-serialised without timing_keys
};

inline Outcome run_outcome(const std::string& checkpoint, const std::string& metrics,
                           const std::vector<std::string>& timing_keys) {
  Outcome o;
  for (const auto& [name, t] : cppgrad::read_safetensors(checkpoint).tensors) o.weights[name] = t.to_double_vector();
  std::ifstream f(metrics);
  for (std::string line; std::getline(f, line);) {
    auto j = nlohmann::json::parse(line);
    for (const std::string& key : timing_keys) j.erase(key);
    o.metrics.push_back(j.dump());
  }
  return o;
}

// The same tensors under the same names, bit for bit.
inline void expect_same_weights(const Outcome& a, const Outcome& b) {
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (const auto& [name, w] : a.weights) {
    const auto other = b.weights.find(name);
    ASSERT_NE(other, b.weights.end()) << name << " is missing from the second checkpoint";
    EXPECT_EQ(w, other->second) << name;
  }
}

// The same metrics, line for line, and the same weights.
inline void expect_same(const Outcome& a, const Outcome& b) {
  EXPECT_EQ(a.metrics, b.metrics);
  expect_same_weights(a, b);
}

}  // namespace cppgrad::test
