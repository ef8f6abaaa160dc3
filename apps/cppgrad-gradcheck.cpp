// cppgrad-gradcheck: the float64 finite-difference gradient check of every op and module, from the command line.
// It runs the same registry as the unit tests (core/checks/, nn/checks/) and prints one row per case.
//
//   cppgrad-gradcheck                          every case
//   cppgrad-gradcheck --order 2                second derivatives (gradgradcheck) of every case
//   cppgrad-gradcheck --only softmax,layer_norm  cases whose name starts with one of these (case and _ ignored)
//   cppgrad-gradcheck --seed 3 --eps 1e-6 --atol 1e-5 --rtol 1e-3
//
// Exit status: 0 when every check passes, 1 when one fails, 2 on bad flags.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cxxopts.hpp>
#include <iostream>
#include <sstream>

#include "nn/checks/registry.h"
#include "cli/parse.h"
#include "cppgrad/version.h"

using namespace cppgrad;
using cli::split_list;

namespace {

// "layer_norm" and "LayerNorm" both become "layernorm".
std::string normalized(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct Flags {
  GradcheckOptions options;
  std::uint64_t seed = 0;
  int order = 1;
};

cxxopts::Options flag_spec() {
  cxxopts::Options o("cppgrad-gradcheck", "Float64 central-difference gradient checks of every op and module.");
  o.add_options()("only", "comma-separated name prefixes, e.g. softmax,layer_norm", cxxopts::value<std::string>())
      ("order", "1: gradients (gradcheck); 2: gradients of gradients (gradgradcheck)",
       cxxopts::value<std::string>()->default_value("1"))
      ("seed", "seed of the random inputs and parameters (0: the unit tests' values)",
       cxxopts::value<std::string>()->default_value("0"))
      ("eps", "finite-difference step", cxxopts::value<std::string>()->default_value("1e-6"))
      ("atol", "absolute tolerance", cxxopts::value<std::string>()->default_value("1e-5"))
      ("rtol", "relative tolerance", cxxopts::value<std::string>()->default_value("1e-3"))
      ("include-broken", "also check a deliberately wrong backward (it must FAIL)")
      ("list", "list the cases and exit")
      ("version", "print the version and exit")
      ("h,help", "this help");
  return o;
}

// The numbers, parsed strictly (cli/parse.h); throws std::invalid_argument naming the flag.
Flags numeric_flags(const cxxopts::ParseResult& r) {
  Flags f;
  f.seed = cli::uint_flag("seed", r["seed"].as<std::string>());
  f.options = {.eps = cli::double_flag("eps", r["eps"].as<std::string>()),
               .atol = cli::double_flag("atol", r["atol"].as<std::string>()),
               .rtol = cli::double_flag("rtol", r["rtol"].as<std::string>())};
  f.order = cli::int_flag("order", r["order"].as<std::string>());
  if (!(f.options.eps > 0) || !(f.options.atol >= 0) || !(f.options.rtol >= 0))
    throw std::invalid_argument("--eps must be positive and --atol, --rtol non-negative");
  if (f.order != 1 && f.order != 2) throw std::invalid_argument("--order must be 1 or 2, got " + std::to_string(f.order));
  return f;
}

// The registry's cases, narrowed by --only; throws std::invalid_argument when nothing matches.
std::vector<checks::GradcheckCase> chosen_cases(const cxxopts::ParseResult& r, int order) {
  std::vector<checks::GradcheckCase> cases = checks::gradcheck_cases();
  if (r.count("only")) {
    const auto prefixes = split_list(r["only"].as<std::string>());
    std::vector<checks::GradcheckCase> chosen;
    for (const auto& c : cases)
      if (std::any_of(prefixes.begin(), prefixes.end(),
                      [&](const std::string& p) { return normalized(c.name).rfind(normalized(p), 0) == 0; }))
        chosen.push_back(c);
    if (chosen.empty())
      throw std::invalid_argument("no case matches --only " + r["only"].as<std::string>() +
                                  " (cppgrad-gradcheck --list shows them)");
    cases = std::move(chosen);
  }
  if (r.count("include-broken"))
    cases.push_back(order == 1 ? checks::broken_case() : checks::broken_double_backward_case());
  return cases;
}

// Checks every case, one row each; returns how many failed.
int check_all(const std::vector<checks::GradcheckCase>& cases, const Flags& f) {
  fmt::print("{:<44} {:<30} {:>10} {:>10}  {:<34} {}\n", "case", "inputs", "max abs", "max rel", "worst element",
             "result");
  int failed = 0;
  for (const auto& c : cases) {
    std::string verdict, worst = "-", inputs;
    double abs_err = 0, rel_err = 0;
    try {
      const checks::Prepared p = c.prepare(f.seed);
      inputs = checks::describe_inputs(p, 3);
      const GradcheckResult res =
          f.order == 1 ? gradcheck(p.fn, p.inputs, f.options) : gradgradcheck(p.fn, p.inputs, f.options, f.seed);
      abs_err = res.max_abs_error, rel_err = res.max_rel_error, worst = res.worst;
      verdict = res.ok ? "pass" : "FAIL: " + res.message;
      failed += !res.ok;
    } catch (const std::exception& e) {
      verdict = std::string("FAIL: threw ") + e.what();
      ++failed;
    }
    fmt::print("{:<44} {:<30} {:>10.2e} {:>10.2e}  {:<34} {}\n", c.group + " " + c.name, inputs, abs_err, rel_err,
               worst, verdict);
    std::fflush(stdout);
  }
  return failed;
}

int run(int argc, char** argv) {
  cxxopts::Options spec = flag_spec();
  cxxopts::ParseResult r;
  Flags flags;
  std::vector<checks::GradcheckCase> cases;
  try {
    r = spec.parse(argc, argv);
    if (!r.unmatched().empty()) throw std::invalid_argument("unexpected argument '" + r.unmatched()[0] + "'");
    if (r.count("help") || r.count("version")) {
      std::cout << (r.count("help") ? spec.help() : std::string("cppgrad-gradcheck ") + CPPGRAD_VERSION) << "\n";
      return 0;
    }
    flags = numeric_flags(r);
    cases = chosen_cases(r, flags.order);
  } catch (const std::exception& e) {
    std::cerr << "cppgrad-gradcheck: " << e.what() << "\n";
    return 2;
  }
  if (r.count("list")) {
    for (const auto& c : cases) fmt::print("{:<8} {}\n", c.group, c.name);
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  const int failed = check_all(cases, flags);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("\n{} of {} {} passed ({:.1f}s; eps {:g}, atol {:g}, rtol {:g}, seed {})\n", cases.size() - failed,
             cases.size(), flags.order == 1 ? "checks" : "second-order checks", s,
             flags.options.eps, flags.options.atol, flags.options.rtol, flags.seed);
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "cppgrad-gradcheck: unexpected error: " << e.what() << "\n";
    return 1;
  }
}
