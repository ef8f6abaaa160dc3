#include "distributed/process_group.h"

#include <stdexcept>
#include <string>

#include "distributed/mpi_call.h"

namespace cppgrad::distributed {

void check_mpi(int rc, const char* fn, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw std::runtime_error(std::string(fn) + ": " + call + " failed: " +
                           (length > 0 ? std::string(text, static_cast<std::size_t>(length))
                                       : "MPI error " + std::to_string(rc)));
}

// torch.distributed.init_process_group(backend="mpi"). MPI_Init_thread itself reports a failure through
// MPI_ERRORS_ARE_FATAL (no communicator exists yet to set a handler on), so that one failure aborts, as MPI decides.
ProcessGroup::ProcessGroup() : comm_(std::make_unique<Communicator>()) {
  int initialized = 0, finalized = 0;
  check_mpi(MPI_Finalized(&finalized), "ProcessGroup", "MPI_Finalized");
  if (finalized) {
    throw std::runtime_error("ProcessGroup: MPI was finalised already in this process and cannot start again: "
                             "make one ProcessGroup and keep it for the whole run");
  }
  check_mpi(MPI_Initialized(&initialized), "ProcessGroup", "MPI_Initialized");
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    check_mpi(MPI_Query_thread(&provided), "ProcessGroup", "MPI_Query_thread");
  } else {
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "ProcessGroup", "MPI_Init_thread");
    finalize_ = true;
  }
  try {
    // The training step's worker threads never call MPI, but the thread calling the collectives need not be the one
    // that initialised MPI (MPI_THREAD_FUNNELED would require that).
    if (provided < MPI_THREAD_SERIALIZED) {
      throw std::runtime_error("ProcessGroup: this MPI offers thread level " + std::to_string(provided) +
                               ", below MPI_THREAD_SERIALIZED (" + std::to_string(MPI_THREAD_SERIALIZED) + ")");
    }
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_->comm), "ProcessGroup", "MPI_Comm_dup");
    check_mpi(MPI_Comm_set_errhandler(comm_->comm, MPI_ERRORS_RETURN), "ProcessGroup", "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_size(comm_->comm, &world_size_), "ProcessGroup", "MPI_Comm_size");
    check_mpi(MPI_Comm_rank(comm_->comm, &rank_), "ProcessGroup", "MPI_Comm_rank");
  } catch (...) {
    if (comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
    if (finalize_) MPI_Finalize();
    throw;
  }
}

// torch.distributed.destroy_process_group(). A destructor cannot throw: failures here are ignored.
ProcessGroup::~ProcessGroup() {
  if (comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
  if (finalize_) MPI_Finalize();
}

}  // namespace cppgrad::distributed
