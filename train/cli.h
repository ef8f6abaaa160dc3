#pragma once
// What a command-line program shares with cppgrad's own (cppgrad-reverse, cppgrad-gpt): bad input is one line and
// exit status 2, flags are parsed strictly (cxxopts, each value by train/flags.h), output paths are checked before any
// work (train/outputs.h), and every exception becomes one line with the status a script can act on. Header-only, on
// cxxopts, which the package therefore declares (find_dependency, pkg-config Requires): a program declares its own
// flags with cxxopts::Options and hands them to parse_flags.
//
//   int main(int argc, char** argv) {
//     return train::run_program("cppgrad-gpt", argc, argv, usage, {{"train", cmd_train}, {"sample", cmd_sample}});
//   }
#include <fmt/format.h>
#include <omp.h>

#include <csignal>
#include <cstdio>
#include <cstdint>
#include <cxxopts.hpp>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/autograd.h"
#include "core/message_text.h"
#include "cppgrad/version.h"
#include "train/diverged.h"
#include "train/flags.h"
#include "train/outputs.h"
#include "train/shell_quoted.h"
#include "train/stop.h"

namespace cppgrad::train {

// Bad input: printed as one line, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --help: the command's flags, which run_program prints before it returns 0. Thrown rather than printed and exited
// there, because library code never exits: the command unwinds as it would from an error.
struct HelpRequested {
  std::string text;
};

// Parses argv; --help throws HelpRequested. An argument no flag takes is a usage error unless `positional` (then the
// program reads r.unmatched() itself).
// cxxopts' message in the command line's own words: "Option ‘vocab’ does not exist" -> "unknown flag --vocab (--help
// lists this command's flags)", "Option ‘data’ is missing an argument" -> "--data is missing an argument".
inline std::string flag_message(std::string what) {
  const std::string open = "Option \xE2\x80\x98", close = "\xE2\x80\x99";  // U+2018, U+2019
  const std::size_t start = what.find(open), end = what.find(close);
  if (start == std::string::npos || end == std::string::npos || end < start) return what;
  const std::string flag = (what.compare(start + open.size(), 1, "-") == 0 ? "" : "--") +
                           what.substr(start + open.size(), end - start - open.size());
  const std::string rest = what.substr(end + close.size());
  if (rest == " does not exist") return "unknown flag " + flag + " (--help lists this command's flags)";
  return what.substr(0, start) + flag + rest;
}

inline cxxopts::ParseResult parse_flags(cxxopts::Options& o, int argc, char** argv, bool positional = false) {
  try {
    if (positional) o.allow_unrecognised_options();
    auto r = o.parse(argc, argv);
    if (r.count("help")) throw HelpRequested{o.help()};
    if (!positional && !r.unmatched().empty()) throw UsageError("unexpected argument '" + r.unmatched()[0] + "'");
    return r;
  } catch (const cxxopts::exceptions::exception& e) {
    throw UsageError(flag_message(e.what()));
  }
}

// A flag's value, parsed strictly (train/flags.h): a refusal is a usage error naming the flag.
template <typename T>
T flag_value(const cxxopts::ParseResult& r, const std::string& flag) {
  const std::string text = r[flag].as<std::string>();
  try {
    if constexpr (std::is_same_v<T, std::string>) return text;
    else if constexpr (std::is_same_v<T, double>) return double_flag(flag, text);
    else if constexpr (std::is_same_v<T, std::uint64_t>) return uint_flag(flag, text);
    else return int_flag(flag, text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// The path a flag names, or "" when it was not given.
inline std::string flag_path(const cxxopts::ParseResult& r, const std::string& flag) {
  return r.count(flag) ? r[flag].as<std::string>() : std::string();
}

// A flag the command cannot go without: its value, or a usage error saying what `command` needs ("merge needs
// --checkpoint PATH (...)").
inline std::string required_flag(const cxxopts::ParseResult& r, const std::string& command, const std::string& flag,
                                 const std::string& what) {
  if (!r.count(flag)) throw UsageError(command + " needs --" + flag + " " + what);
  return r[flag].as<std::string>();
}

// Bad output paths are usage errors, found before any work is done.
inline void check_outputs_or_usage_error(const std::vector<OutputFlag>& outputs, const std::string& resume = "",
                                         const std::vector<InputFlag>& inputs = {}) {
  try {
    check_outputs(outputs, resume, inputs);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// The worker threads a command runs (0: OpenMP's default, one per core); more than the cores is said once, on stderr
// (threads_note).
inline void set_threads(std::int64_t threads) {
  if (const std::string note = threads_note(threads, std::thread::hardware_concurrency()); !note.empty())
    std::cerr << note << std::endl;
  if (threads > 0) omp_set_num_threads(static_cast<int>(threads));
}

// A run Ctrl-C or SIGTERM stopped between two steps (train/stop.h): saved with --save, one line saying how to go on
// (`where` says where it stopped: "stopped by SIGINT in epoch 2 after step 40 of 79"), and the status a signal gives
// (130, 143).
inline int stopped_by_signal(const std::string& program, const std::string& where, const std::string& save_path,
                             const std::function<void(const std::string&)>& save) {
  if (save_path.empty()) {
    fmt::print("{}; nothing saved (no --save), so it cannot be resumed\n", where);
  } else {
    save(save_path);
    const std::string path = shell_quoted(save_path);
    fmt::print("{}; saved to {}: resume with {} train --resume {} --save {}\n", where, save_path, program, path, path);
  }
  std::fflush(stdout);
  return stop_status();
}

using Command = std::function<int(int, char**)>;

// A refusal as run_program prints it: one line on stderr, however the message came to hold a newline, a NUL's
// escape, a terminal control or megabytes of a file (core/message_text.h: escaped, and cut past 1000 bytes).
inline void print_error_line(const std::string& message) { std::cerr << message_line(message) << "\n"; }

// Runs `command` as `<program> <name> args...` would (argv[0] is the name): a program's own check, a run and then its
// resume, without starting another process.
inline int run_command(const Command& command, const std::string& name, std::vector<std::string> args) {
  args.insert(args.begin(), name);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return command(static_cast<int>(argv.size()), argv.data());
}

// Runs `program <command> [flags]`: --help / no command print `usage`, `<command> --help` its flags, --version the
// version, and every exception becomes one line "<program> <command>: <what>" with its status: 2 bad input (flags,
// values, files), 3 training diverged, 1 anomaly detected, out of memory, or an unexpected failure.
// out_of_memory_hints: each command's own remedy, in its own flags ("smaller --batch-size ..."), for the line
// "out of memory (<hint>)"; a command without one is told to give smaller input.
inline int run_program(const std::string& program, int argc, char** argv, const std::string& usage,
                       const std::map<std::string, Command>& commands,
                       const std::map<std::string, std::string>& out_of_memory_hints) {
  // A reader of --metrics-out that goes away (a closed pipe) is an error to report, not a signal to die of.
  std::signal(SIGPIPE, SIG_IGN);
  const std::string first = argc >= 2 ? argv[1] : "";
  if (argc < 2 || first == "--help" || first == "-h") {
    std::cout << usage;
    return argc < 2 ? 2 : 0;
  }
  if (first == "--version") {
    std::cout << program << " " << CPPGRAD_VERSION << "\n";
    return 0;
  }
  const auto found = commands.find(first);
  if (found == commands.end()) {
    std::string names;
    for (const auto& [name, command] : commands) names += (names.empty() ? "" : ", ") + name;
    print_error_line(program + ": unknown command '" + first + "' (commands: " + names + "; --help explains them)");
    return 2;
  }
  const std::string where = program + " " + first + ": ";
  try {
    return found->second(argc - 1, argv + 1);
  } catch (const HelpRequested& help) {
    std::cout << help.text << std::endl;
    return 0;
  } catch (const UsageError& e) {
    print_error_line(where + e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    print_error_line(where + e.what());
    return 2;
  } catch (const TrainingDiverged& e) {  // the loss became NaN or Inf: not a usage error
    print_error_line(where + e.what());
    return 3;
  } catch (const AnomalyError& e) {  // --detect-anomaly found a NaN or Inf
    print_error_line(where + e.what());
    return 1;
  } catch (const std::runtime_error& e) {  // files: missing, corrupt, another configuration, cannot write
    print_error_line(where + e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    const auto hint = out_of_memory_hints.find(first);
    print_error_line(where + "out of memory (" +
                     (hint != out_of_memory_hints.end() ? hint->second : "smaller input needs less") + ")");
    return 1;
  } catch (const std::exception& e) {
    print_error_line(where + "unexpected error: " + e.what());
    return 1;
  }
}

// The same with one remedy for every command (a program of one kind of work: all its commands train).
inline int run_program(const std::string& program, int argc, char** argv, const std::string& usage,
                       const std::map<std::string, Command>& commands, const std::string& out_of_memory_hint) {
  std::map<std::string, std::string> hints;
  for (const auto& [name, command] : commands) hints[name] = out_of_memory_hint;
  return run_program(program, argc, argv, usage, commands, hints);
}

}  // namespace cppgrad::train
