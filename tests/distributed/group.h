#pragma once
// The distributed tests run on every rank of one `mpirun -np N` (tests/CMakeLists.txt: N = 2 and 4), in the same
// order on every rank: a test calls the same collectives on every rank (no ASSERT_* before a collective, which would
// leave the other ranks waiting in it).
#include "distributed/process_group.h"

namespace cppgrad::test {

// The run's one group, made by main.cpp before the tests (MPI starts once per process).
const distributed::ProcessGroup& group();

// The world size the command line promised (--world-size=N), or 0 when not given.
int expected_world_size();

}  // namespace cppgrad::test
