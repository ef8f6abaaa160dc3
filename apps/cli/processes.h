#pragma once
// The processes of a run that mpirun started (issue 26): `mpirun -np 4 cppgrad-gpt train ...`. A program asks for
// them once, at the start of training; without mpirun there are none and nothing here touches MPI. With them the
// trainer's train::DataParallel runs each process's block of shards and sums the blocks over the ranks (the link is
// train/mpi/mpi_link.h, on distributed/tree_sum.h), every process starts from rank 0's weights, and only rank 0
// writes and prints.
#include <cstdlib>
#include <memory>
#include <string>

#include "train/cli.h"
#include "train/data_parallel.h"
#ifdef CPPGRAD_WITH_MPI
#include "train/mpi/mpi_link.h"
#endif

namespace cppgrad::cli {

// mpirun's size of the run, from the variables Open MPI (OMPI_COMM_WORLD_SIZE) and MPICH/Hydra (PMI_SIZE) set in
// every process they start; 0 when this process was not started by one.
inline int mpirun_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

// The run's processes: none (nullptr) when mpirun did not start this process, a link otherwise. A build without MPI
// started by mpirun on several processes is a usage error: each process would train alone and write the same files.
inline std::unique_ptr<train::ProcessLink> join_processes([[maybe_unused]] const std::string& program) {
  const int size = mpirun_world_size();
  if (size <= 0) return nullptr;
#ifdef CPPGRAD_WITH_MPI
  return train::join_mpi_processes();
#else
  if (size > 1)
    throw train::UsageError(program + " was built without MPI, so it cannot train on the " + std::to_string(size) +
                     " processes mpirun started: install libopenmpi-dev (bash .ci/install-deps.sh --ci) and rebuild");
  return nullptr;
#endif
}

// Whether training should stop at this step boundary (train/stop.h: Ctrl-C or SIGTERM seen). With processes, a
// collective: all stop together at the first boundary where any of them has seen a signal.
inline bool stop_requested(train::ProcessLink* processes) {
  return processes ? train::any_process(*processes, train::stop_requested()) : train::stop_requested();
}

}  // namespace cppgrad::cli
