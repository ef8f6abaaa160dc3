#pragma once
// The collectives over a ProcessGroup, with torch.distributed's names and meaning. Every rank of the group must call
// each of them, in the same order, with tensors of the same shape and dtype: each checks that first (one small
// exchange), so a misuse throws std::invalid_argument on every rank instead of hanging or reducing mismatched data.
// A failure inside MPI throws std::runtime_error naming the MPI call. Tensors are changed in place: a Tensor is a
// handle, so a const one still gives its memory (as Tensor::copy_ does).
#include "core/tensor.h"
#include "distributed/process_group.h"

namespace cppgrad::distributed {

// torch.distributed.ReduceOp.SUM and .AVG (Mean: the sum divided by the world size, on every rank).
enum class ReduceOp { Sum, Mean };

// torch.distributed.all_reduce(tensor, op): every rank's tensor becomes the elementwise sum (or mean) of all ranks'
// tensors. tensor: contiguous, float32 or float64, the same shape and dtype on every rank. One MPI_Allreduce.
void all_reduce(const ProcessGroup& group, const Tensor& tensor, ReduceOp op = ReduceOp::Sum);

// torch.distributed.broadcast(tensor, src): every rank's tensor becomes rank src's, byte for byte. tensor:
// contiguous, any dtype, the same shape and dtype on every rank; src in [0, world_size). One MPI_Bcast.
void broadcast(const ProcessGroup& group, const Tensor& tensor, int src);

// torch.distributed.barrier(): returns once every rank has called it. One MPI_Barrier.
void barrier(const ProcessGroup& group);

}  // namespace cppgrad::distributed
