#pragma once
// Every gradient-check case: the ops' (core/checks/, one file per op group) and the modules'
// (nn/checks/module_cases.cpp), run by the unit tests and by cppgrad-gradcheck.
#include <vector>

#include "core/checks/cases.h"

namespace cppgrad::checks {

std::vector<GradcheckCase> module_cases();

// op_cases() then module_cases(), built once.
const std::vector<GradcheckCase>& gradcheck_cases();

}  // namespace cppgrad::checks
