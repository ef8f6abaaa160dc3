#pragma once
// Data-parallel training's two calls, what PyTorch's DistributedDataParallel does around a model: all ranks start
// from the same weights (broadcast_parameters, DDP's _sync_module_states at construction) and, after each backward,
// every gradient becomes the mean over the ranks (average_gradients, DDP's gradient buckets and their all-reduce),
// so each rank's optimizer takes the same step:
//
//   distributed::broadcast_parameters(group, model.parameters());   // once, before training
//   ... each step: opt.zero_grad(); loss_of_this_ranks_rows.backward();
//                  distributed::average_gradients(group, model.parameters()); opt.step();
//
// Like the collectives (distributed/collectives.h), every rank must call them with parameters of the same shapes
// and dtypes in the same order; each checks that first and throws std::invalid_argument on every rank otherwise.
#include <cstddef>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"

namespace cppgrad::distributed {

// DDP's bucket_cap_mb default: 25 MiB of gradients per all-reduce.
inline constexpr std::size_t kDefaultBucketBytes = std::size_t{25} << 20;

// Tensors [begin, end) of a list, reduced by one all-reduce.
struct Bucket {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// DDP's _compute_bucket_assignment_by_size: consecutive tensors, in the order given, gathered while their bytes
// stay within bucket_bytes and their dtype is the same; a tensor larger than bucket_bytes has a bucket of its own.
// (DDP fills buckets in reverse order, to start reducing while backward still runs; here backward has ended.)
std::vector<Bucket> assign_buckets(const std::vector<Tensor>& tensors, std::size_t bucket_bytes);

// After backward: each parameter's gradient becomes the mean of that gradient over the ranks. The gradients of a
// bucket (assign_buckets) are copied into one flat buffer, summed by one MPI_Allreduce, divided by the world size
// and copied back: one collective per bucket, not per tensor. Gradients: contiguous, float32 or float64. A parameter
// without a gradient is left so, and must be without one on every rank. bucket_bytes > 0.
void average_gradients(const ProcessGroup& group, const std::vector<Tensor>& params,
                       std::size_t bucket_bytes = kDefaultBucketBytes);

// Before training: every parameter's values become rank src's (byte for byte, one MPI_Bcast per parameter), so all
// ranks start from one model. params: contiguous, any dtype.
void broadcast_parameters(const ProcessGroup& group, const std::vector<Tensor>& params, int src = 0);

}  // namespace cppgrad::distributed
