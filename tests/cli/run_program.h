#pragma once
// Runs one of the programs as a user would, through the shell: its exit status and everything it printed
// (standard output and standard error together).
#include <sys/wait.h>

#include <cstdio>
#include <string>

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

}  // namespace cppgrad::test
