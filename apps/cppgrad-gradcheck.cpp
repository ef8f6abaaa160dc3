// cppgrad-gradcheck: the float64 finite-difference gradient check of every op and module, from the command line.
// It runs the same registry as the unit tests (core/checks/, nn/checks/) and prints one row per case.
//
//   cppgrad-gradcheck                          every case
//   cppgrad-gradcheck --order 2                second derivatives (gradgradcheck) of every case, not the first
//   cppgrad-gradcheck --order 1,2              both, one table each
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

#include "core/message_text.h"
#include "cppgrad/version.h"
#include "nn/checks/registry.h"
#include "train/flags.h"

using namespace cppgrad;
using train::split_list;

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
  std::vector<int> orders = {1};  // 1: gradcheck, 2: gradgradcheck; ascending, each once
};

cxxopts::Options flag_spec() {
  cxxopts::Options o("cppgrad-gradcheck", "Float64 central-difference gradient checks of every op and module.");
  o.add_options()("only", "comma-separated name prefixes, e.g. softmax,layer_norm", cxxopts::value<std::string>())
      ("order",
       "1: gradients (gradcheck); 2: gradients of gradients (gradgradcheck; it does not check the gradients "
       "themselves); 1,2: both",
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

// The numbers, parsed strictly (train/flags.h); throws std::invalid_argument naming the flag.
Flags numeric_flags(const cxxopts::ParseResult& r) {
  Flags f;
  f.seed = uint_flag("seed", r["seed"].as<std::string>());
  f.options = {.eps = double_flag("eps", r["eps"].as<std::string>()),
               .atol = double_flag("atol", r["atol"].as<std::string>()),
               .rtol = double_flag("rtol", r["rtol"].as<std::string>())};
  if (!(f.options.eps > 0) || !(f.options.atol >= 0) || !(f.options.rtol >= 0))
    throw std::invalid_argument("--eps must be positive and --atol, --rtol non-negative");
  f.orders.clear();
  for (const std::string& item : split_list(r["order"].as<std::string>())) {
    const std::int64_t order = int_flag("order", item);
    if (order != 1 && order != 2) throw std::invalid_argument("--order must be 1, 2 or 1,2, got " + item);
    f.orders.push_back(static_cast<int>(order));
  }
  if (f.orders.empty()) throw std::invalid_argument("--order must be 1, 2 or 1,2");
  std::sort(f.orders.begin(), f.orders.end());
  f.orders.erase(std::unique(f.orders.begin(), f.orders.end()), f.orders.end());
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

// What a table of `order` checks, said above it. Order 2 says what it leaves out: a newcomer running only it
// would otherwise take a pass for a checked first derivative.
void print_heading(int order) {
  if (order == 1)
    fmt::print("First derivatives (gradcheck): each case's Jacobian from backward against central differences.\n");
  else
    fmt::print("Second derivatives (gradgradcheck, as torch.autograd.gradgradcheck): the Jacobian of each case's "
               "gradient,\nas a function of its inputs and of a random upstream gradient v, against central "
               "differences of that gradient.\nThis does not check the first derivative itself: run --order 1 "
               "(the default) or --order 1,2 for that.\n");
}

// Checks every case to `order`, one row each; returns how many failed. The worst element is the entry furthest past
// (or closest to) its tolerance, the one a Jacobian FAIL names.
int check_all(const std::vector<checks::GradcheckCase>& cases, const Flags& f, int order) {
  const int worst_width = order == 1 ? 34 : 44;  // "input 0 [1, 2] / grad of input 1 [3, 4]" at order 2
  fmt::print("{:<44} {:<30} {:>10} {:>10}  {:<{}} {}\n", "case", "inputs", "max abs", "max rel", "worst element",
             worst_width, "result");
  int failed = 0;
  for (const auto& c : cases) {
    std::string verdict, worst = "-", inputs;
    double abs_err = 0, rel_err = 0;
    try {
      const checks::Prepared p = c.prepare(f.seed);
      inputs = checks::describe_inputs(p, 3);
      const GradcheckResult res =
          order == 1 ? gradcheck(p.fn, p.inputs, f.options) : gradgradcheck(p.fn, p.inputs, f.options, f.seed);
      abs_err = res.max_abs_error, rel_err = res.max_rel_error, worst = res.worst;
      verdict = res.ok ? "pass" : "FAIL: " + res.message;
      failed += !res.ok;
    } catch (const std::exception& e) {
      verdict = std::string("FAIL: threw ") + e.what();
      ++failed;
    }
    fmt::print("{:<44} {:<30} {:>10.2e} {:>10.2e}  {:<{}} {}\n", c.group + " " + c.name, inputs, abs_err, rel_err,
               worst, worst_width, verdict);
    std::fflush(stdout);
  }
  return failed;
}

int run(int argc, char** argv) {
  cxxopts::Options spec = flag_spec();
  cxxopts::ParseResult r;
  Flags flags;
  std::vector<std::vector<checks::GradcheckCase>> tables;  // [one per order]: the cases checked to that order
  try {
    r = spec.parse(argc, argv);
    if (!r.unmatched().empty()) throw std::invalid_argument("unexpected argument '" + r.unmatched()[0] + "'");
    if (r.count("help") || r.count("version")) {
      std::cout << (r.count("help") ? spec.help() : std::string("cppgrad-gradcheck ") + CPPGRAD_VERSION) << "\n";
      return 0;
    }
    flags = numeric_flags(r);
    for (int order : flags.orders) tables.push_back(chosen_cases(r, order));
  } catch (const std::exception& e) {
    std::cerr << message_line(std::string("cppgrad-gradcheck: ") + e.what()) << "\n";
    return 2;
  }
  if (r.count("list")) {  // each case once, though --include-broken adds one per order
    std::vector<std::string> listed;
    for (const auto& cases : tables)
      for (const auto& c : cases)
        if (std::find(listed.begin(), listed.end(), c.name) == listed.end()) {
          listed.push_back(c.name);
          fmt::print("{:<8} {}\n", c.group, c.name);
        }
    return 0;
  }
  int failed_total = 0;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const int order = flags.orders[t];
    const auto& cases = tables[t];
    if (t) fmt::print("\n");
    if (order == 2 || tables.size() > 1) print_heading(order);  // the default run's output stays as it was
    const auto start = std::chrono::steady_clock::now();
    const int failed = check_all(cases, flags, order);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("\n{} of {} {} passed ({:.1f}s; eps {:g}, atol {:g}, rtol {:g}, seed {})\n", cases.size() - failed,
               cases.size(), order == 1 ? "checks" : "second-order checks", s, flags.options.eps, flags.options.atol,
               flags.options.rtol, flags.seed);
    failed_total += failed;
  }
  return failed_total ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << message_line(std::string("cppgrad-gradcheck: unexpected error: ") + e.what()) << "\n";
    return 1;
  }
}
