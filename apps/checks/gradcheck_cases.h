#pragma once
// The registry of gradient-check cases: one entry per op and module (and per interesting variant: broadcasting,
// transposed and sliced views, masks, ...). The unit tests register one GradCheck.<name> test per entry and
// cppgrad-gradcheck runs them from the command line, so a new op's check is written once.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/gradcheck.h"
#include "core/tensor.h"

namespace cppgrad::checks {

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

const std::vector<GradcheckCase>& gradcheck_cases();

// A deliberately wrong backward, to show that a checker fails (not part of gradcheck_cases()).
GradcheckCase broken_case();

// Float64 leaves requiring grad: uniform in [lo, hi), or with magnitudes of at least `gap` (away from kinks).
Tensor leaf(const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0);
Tensor leaf_away_from_zero(const Shape& shape, std::uint64_t seed, double gap = 0.1);

// "[2, 3] [3] +4 params": the first `shown` input shapes, for tables.
std::string describe_inputs(const Prepared& p, std::size_t shown);

}  // namespace cppgrad::checks
