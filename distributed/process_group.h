#pragma once
// ProcessGroup: the processes one `mpirun -np N` starts, as one group that the collectives (distributed/collectives.h,
// distributed/tree_sum.h, distributed/parameters.h) run over. PyTorch calls its making
// torch.distributed.init_process_group(backend="mpi") and its end destroy_process_group(); here the object's lifetime
// is the group's (RAII), and every collective takes the group it runs over (no hidden default group):
//
//   distributed::ProcessGroup group;              // MPI_Init_thread; rank and world size from mpirun
//   distributed::broadcast_parameters(group, model.parameters());  // every rank starts from rank 0's weights
//   ... each step: loss.backward(); distributed::tree_sum(group, gradients); opt.step();
//
// MPI can be initialised once per process, so make one group, on the thread that calls the collectives, and keep it
// for the whole run. A group made where MPI is already initialised (by the program itself) uses it and leaves the
// MPI_Finalize to whoever initialised it.
#include <memory>

namespace cppgrad::distributed {

class ProcessGroup {
 public:
  // Initialises MPI (MPI_THREAD_SERIALIZED: the collectives may be called from any one thread at a time) unless it
  // is initialised already, and takes a communicator of its own over every process (a duplicate of MPI_COMM_WORLD
  // whose errors return to the caller: a failed call throws std::runtime_error naming it instead of aborting).
  // Throws std::runtime_error when MPI was finalised already (it cannot start again) or offers too little threading.
  ProcessGroup();
  ~ProcessGroup();  // frees the communicator, then MPI_Finalize if this group initialised MPI
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // torch.distributed.get_world_size(): how many processes the group has (mpirun's -np).
  int world_size() const { return world_size_; }
  // torch.distributed.get_rank(): this process's index, 0 .. world_size() - 1.
  int rank() const { return rank_; }

  struct Communicator;  // the MPI_Comm (distributed/mpi_call.h); opaque here, so this header needs no mpi.h
  const Communicator& communicator() const { return *comm_; }

 private:
  std::unique_ptr<Communicator> comm_;
  bool finalize_ = false;  // whether this group initialised MPI, and so finalises it
  int world_size_ = 1;
  int rank_ = 0;
};

}  // namespace cppgrad::distributed
