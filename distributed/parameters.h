#pragma once
// Before data-parallel training, every rank starts from the same weights: broadcast_parameters, what PyTorch's
// DistributedDataParallel does at construction (_sync_module_states). After each backward the trainers sum the
// shards' gradients over the ranks in a fixed tree (distributed/tree_sum.h, train/data_parallel.h):
//
//   distributed::broadcast_parameters(group, model.parameters());   // once, before training
//   ... each step: backward on this rank's shards; distributed::tree_sum(group, gradients); opt.step();
//
// Like the collectives (distributed/collectives.h), every rank must call it with parameters of the same shapes and
// dtypes in the same order; it checks that first and throws std::invalid_argument on every rank otherwise.
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"

namespace cppgrad::distributed {

// Every parameter's values become rank src's (byte for byte, one MPI_Bcast per parameter), so all ranks start from
// one model. params: contiguous, any dtype.
void broadcast_parameters(const ProcessGroup& group, const std::vector<Tensor>& params, int src = 0);

}  // namespace cppgrad::distributed
