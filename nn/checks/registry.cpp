#include "nn/checks/registry.h"

namespace cppgrad::checks {

const std::vector<GradcheckCase>& gradcheck_cases() {
  static const std::vector<GradcheckCase> cases = [] {
    std::vector<GradcheckCase> all = op_cases();
    for (GradcheckCase& c : module_cases()) all.push_back(std::move(c));
    return all;
  }();
  return cases;
}

}  // namespace cppgrad::checks
