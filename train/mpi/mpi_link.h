#pragma once
// The run's processes over MPI: a train::ProcessLink whose calls are the distributed layer's (distributed/), for a
// program started by mpirun. It lives in its own small library, cppgrad_train_mpi (train/CMakeLists.txt), built only
// where MPI is found and linking both cppgrad_train and cppgrad_distributed, so the training layer itself stays free
// of MPI and the distributed layer knows nothing of the training layer: train <- train_mpi -> distributed.
#include <memory>

#include "train/data_parallel.h"

namespace cppgrad::train {

// Joins the processes mpirun started (MPI initialised for the link's lifetime, finalised when it is destroyed): one
// call per process, at the start of training. Each step's ProcessLink::tree_sum is distributed::tree_sum,
// broadcast is distributed::broadcast_parameters from rank 0, all_gather is distributed::all_gather.
std::unique_ptr<ProcessLink> join_mpi_processes();

}  // namespace cppgrad::train
