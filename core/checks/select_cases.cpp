// Gradient-check cases of selection and lookup (core/ops/select.cpp, core/ops/scatter.cpp).
#include <cmath>

#include "core/checks/cases.h"
#include "core/generator.h"
#include "core/ops/scatter.h"
#include "core/ops/select.h"

namespace cppgrad::checks {

std::vector<GradcheckCase> select_cases() {
  std::vector<GradcheckCase> cases;
  const CaseAdder check{cases, "op"};
  check("MaskedFill", [](std::uint64_t seed) {
    Tensor mask = Tensor::from_vector<bool>({true, false, false, true}, {1, 4});
    return Prepared{[mask](const Inputs& in) { return masked_fill(in[0], mask, -5.0); }, Inputs{leaf({3, 4}, seed + 58)}};
  });
  check("Where", [](std::uint64_t seed) {
    Tensor cond = Tensor::from_vector<bool>({true, false, true, false, false, true}, {2, 3});
    return Prepared{[cond](const Inputs& in) { return where(cond, in[0], in[1]); },
                    Inputs{leaf({2, 3}, seed + 59), leaf({2, 3}, seed + 60)}};
  });
  check("WhereBroadcast", [](std::uint64_t seed) {
    Tensor cond = Tensor::from_vector<bool>({true, false, true}, {3});
    return Prepared{[cond](const Inputs& in) { return where(cond, in[0], in[1]); },
                    Inputs{leaf({2, 3}, seed + 61), leaf({2, 1}, seed + 62)}};
  });
  check("Cat", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) {
                      return cat({in[0], in[1], in[2]}, 1);
                    },
                    Inputs{leaf({2, 1, 3}, seed + 63), leaf({2, 2, 3}, seed + 64), leaf({2, 3, 3}, seed + 65)}};
  });
  check("CatLastDim", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) {
                      return cat({in[0], in[1]}, -1);
                    },
                    Inputs{leaf({2, 2}, seed + 66), leaf({2, 3}, seed + 67)}};
  });
  check("Stack", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) {
                      return stack({in[0], in[1]}, 1);
                    },
                    Inputs{leaf({2, 3}, seed + 68), leaf({2, 3}, seed + 69)}};
  });
  check("IndexSelect", [](std::uint64_t seed) {
    Tensor idx = Tensor::from_vector<std::int64_t>({2, 0, 2, 1}, {4});  // a repeated index accumulates
    return Prepared{[idx](const Inputs& in) { return index_select(in[0], 1, idx); }, Inputs{leaf({2, 3, 2}, seed + 70)}};
  });
  check("Gather", [](std::uint64_t seed) {
    Tensor idx = Tensor::from_vector<std::int64_t>({0, 2, 2, 1, 0, 0}, {2, 3});
    return Prepared{[idx](const Inputs& in) { return gather(in[0], 1, idx); }, Inputs{leaf({2, 4}, seed + 71)}};
  });
  check("GatherDim0", [](std::uint64_t seed) {
    Tensor idx = Tensor::from_vector<std::int64_t>({1, 0, 1}, {1, 3});
    return Prepared{[idx](const Inputs& in) { return gather(in[0], 0, idx); }, Inputs{leaf({2, 3}, seed + 72)}};
  });
  check("Embedding", [](std::uint64_t seed) {
    Tensor ids = Tensor::from_vector<std::int64_t>({1, 4, 1, 0, 3, 3}, {2, 3});
    return Prepared{[ids](const Inputs& in) { return embedding(in[0], ids); }, Inputs{leaf({5, 3}, seed + 73)}};
  });
  check("IndexAdd", [](std::uint64_t seed) {
    // A repeated index: both source rows add into row 2.
    Tensor idx = Tensor::from_vector<std::int64_t>({2, 0, 2}, {3});
    return Prepared{[idx](const Inputs& in) { return index_add(in[0], 1, idx, in[1]); },
                    Inputs{leaf({2, 4, 3}, seed + 74), leaf({2, 3, 3}, seed + 75)}};
  });
  check("ScatterAdd", [](std::uint64_t seed) {
    // index [2, 2] within a larger src [2, 3] (only its corner is read), repeated targets in row 0.
    Tensor idx = Tensor::from_vector<std::int64_t>({1, 1, 0, 2}, {2, 2});
    return Prepared{[idx](const Inputs& in) { return scatter_add(in[0], 1, idx, in[1]); },
                    Inputs{leaf({2, 3}, seed + 76), leaf({2, 3}, seed + 77)}};
  });
  check("SliceScatter", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return slice_scatter(in[0], in[1], 1, 1, 5, 2); },
                    Inputs{leaf({3, 5}, seed + 78), leaf({3, 2}, seed + 79)}};
  });
  return cases;
}

}  // namespace cppgrad::checks
