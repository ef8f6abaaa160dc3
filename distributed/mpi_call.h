#pragma once
// Inside the distributed layer only (its .cpp files include it; no public header does): the MPI communicator behind
// a ProcessGroup, the check every MPI call goes through, and MPI's int counts over int64 sizes.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "core/dtype.h"
#include "core/tensor.h"
#include "distributed/process_group.h"

namespace cppgrad::distributed {

struct ProcessGroup::Communicator {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN
};

inline MPI_Comm comm_of(const ProcessGroup& group) { return group.communicator().comm; }

// Throws std::runtime_error "<fn>: <call> failed: <MPI's error string>" unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* fn, const char* call);

// The MPI datatype of a floating dtype (float32 -> MPI_FLOAT, float64 -> MPI_DOUBLE); others are the caller's error.
inline MPI_Datatype mpi_floating_type(DType dtype) { return dtype == DType::Float64 ? MPI_DOUBLE : MPI_FLOAT; }

// MPI counts are int: calls piece(offset, count) over [0, n) in pieces of at most INT_MAX elements, in order.
template <class Piece>
void for_each_mpi_piece(std::int64_t n, Piece&& piece) {
  for (std::int64_t offset = 0; offset < n; offset += INT_MAX) {
    piece(offset, static_cast<int>(std::min<std::int64_t>(n - offset, INT_MAX)));
  }
}

// MPI_Bcast of a contiguous tensor's bytes from rank src, in place (any dtype arrives exactly as src holds it).
inline void broadcast_bytes(const ProcessGroup& group, const Tensor& tensor, int src, const char* fn) {
  const auto element = static_cast<std::int64_t>(dtype_size(tensor.dtype()));
  char* bytes = reinterpret_cast<char*>(tensor.impl().storage->mutable_data()) + tensor.offset() * element;
  for_each_mpi_piece(tensor.numel() * element, [&](std::int64_t offset, int count) {
    check_mpi(MPI_Bcast(bytes + offset, count, MPI_BYTE, src, comm_of(group)), fn, "MPI_Bcast");
  });
}

}  // namespace cppgrad::distributed
