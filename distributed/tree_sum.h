#pragma once
// A sum over the ranks whose order is fixed by the tree ((r0 + r1) + (r2 + r3)) + ..., so the result does not depend
// on MPI's choice of algorithm and a run on N processes, each holding the sum of a block of 8 / N shards, adds exactly
// as one process adding all 8 (MPI_Allreduce's order may change with the world size and the message size). Every
// rank ends with the same bits. These are the upper levels of the shards' tree, train::tree_sum (train/tree.h), with
// ranks in place of blocks: the same pairs, added lower + upper, but each level's pair computed on both ranks of the
// pair (recursive doubling) instead of on the lower one alone. This layer stands below the training layer, so the
// loop over levels is its own (tests/distributed/test_tree_sum.cpp holds it to train::tree_sum's order).
//
//   distributed::tree_sum(group, grads);   // every rank: grads = (((g0 + g1) + (g2 + g3)) + ...) of every rank's
//
// Recursive doubling: at level k (k = 0, 1, ...) rank r sends its partial sum to rank r ^ 2^k and receives that
// rank's (one MPI_Sendrecv of one buffer holding every dtype's values: a float64 tensor of a step's numbers rides
// with the float32 gradients at no extra message), and both add the lower rank's partial and the upper rank's:
// log2(N) exchanges of the whole buffer, against the 2 (N - 1) / N a ring all-reduce sends; the world size must be a
// power of two. Like the collectives, every rank calls it with tensors of the same shapes and dtypes in the same
// order (undefined ones in the same places: they are skipped), and a mismatch is refused on every rank.
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"

namespace cppgrad::distributed {

void tree_sum(const ProcessGroup& group, const std::vector<Tensor>& tensors);

// Every rank's values, concatenated in rank order (torch.distributed.all_gather_object for a list of numbers). Each
// rank passes as many values.
std::vector<double> all_gather(const ProcessGroup& group, const std::vector<double>& values);

}  // namespace cppgrad::distributed
