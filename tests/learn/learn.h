#pragma once
// The exercises of docs/learn.md, one file per stop (learn_stopN_*.cpp). Each file holds a solution, what a learner
// writes, and the tests that check it: replace a solution with your own and run `ctest -L learn`.
//
// Every file is built twice: into cppgrad_learn_tests as written, and into cppgrad_learn_planted_wrong with
// CPPGRAD_LEARN_PLANTED_WRONG defined, where each solution makes one mistake a learner might make (the branch on
// kPlantedWrong says which). ctest expects the second build to fail each stop (WILL_FAIL): the proof that every
// test catches a wrong answer.
#include <gtest/gtest.h>

#include <cppgrad/cppgrad.h>

namespace cppgrad::learn {

#ifdef CPPGRAD_LEARN_PLANTED_WRONG
inline constexpr bool kPlantedWrong = true;
#else
inline constexpr bool kPlantedWrong = false;
#endif

}  // namespace cppgrad::learn
