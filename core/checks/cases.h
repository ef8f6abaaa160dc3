#pragma once
// The gradient-check cases of every op, one file per op group (core/checks/<group>_cases.cpp, beside
// core/ops/<group>.cpp); the modules' cases are in nn/checks/. The unit tests register one GradCheck.<name> and
// one GradGradCheck.<name> test per case, and cppgrad-gradcheck runs them from the command line, so a new op's
// check is written once. nn/checks/registry.h gathers every case.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/gradcheck.h"
#include "core/tensor.h"

namespace cppgrad::checks {

using Inputs = std::vector<Tensor>;

// What a case builds: the function to check, its float64 inputs (module parameters included), and whatever
// must stay alive while it runs (the module).
struct Prepared {
  GradcheckFn fn;
  std::vector<Tensor> inputs;
  std::shared_ptr<void> keep_alive = nullptr;
};

struct GradcheckCase {
  std::string name;                   // "Softmax", "MultiHeadAttentionCrossWithPadding"
  std::string group;                  // "op" or "module"
  // Builds fresh inputs each time it is called; every random value derives from `seed` (0: the unit tests').
  std::function<Prepared(std::uint64_t seed)> prepare;
};

// check(name, prepare) appends a case of `group` to `cases`: the one line a group file writes per case.
struct CaseAdder {
  std::vector<GradcheckCase>& cases;
  std::string group;
  void operator()(std::string name, std::function<Prepared(std::uint64_t)> prepare) const {
    cases.push_back({std::move(name), group, std::move(prepare)});
  }
};

// One function per op group, each defined in core/checks/<group>_cases.cpp.
std::vector<GradcheckCase> elementwise_cases();
std::vector<GradcheckCase> reduce_cases();
std::vector<GradcheckCase> matmul_cases();
std::vector<GradcheckCase> softmax_cases();
std::vector<GradcheckCase> attention_cases();
std::vector<GradcheckCase> select_cases();
std::vector<GradcheckCase> norm_cases();
std::vector<GradcheckCase> views_cases();

// Every op's cases, group after group.
std::vector<GradcheckCase> op_cases();

// A deliberately wrong backward, to show that a checker fails (not among the op cases).
GradcheckCase broken_case();
// A correct backward whose own backward (the second derivative) is deliberately wrong: gradcheck passes it and
// gradgradcheck must not.
GradcheckCase broken_double_backward_case();

// Float64 leaves requiring grad: uniform in [lo, hi), or with magnitudes of at least `gap` (away from kinks).
Tensor leaf(const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0);
Tensor leaf_away_from_zero(const Shape& shape, std::uint64_t seed, double gap = 0.1);

// "[2, 3] [3] +4 params": the first `shown` input shapes, for tables.
std::string describe_inputs(const Prepared& p, std::size_t shown);

}  // namespace cppgrad::checks
