#pragma once
// The one binary tree every data-parallel sum follows: the shards' numbers (train/shard_sums.h) and their gradients
// (train::tree_sum_gradients). For n items, level by level (stride 1, 2, 4, ...), item s + stride is added into item
// s for every s that is a multiple of 2 * stride, so item 0 ends with
//
//   ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7))     for n = 8
//
// The order of every addition depends on n alone, never on the threads or processes doing the work. A process
// running the contiguous block of shards [r n / N, (r + 1) n / N) holds, after tree_sum over its block, that block's
// subtree; distributed::tree_sum (distributed/tree_sum.h) then runs the tree's upper levels over the N processes
// (stride n / N, 2 n / N, ...: rank r and rank r ^ 2^k add the lower rank's partial and the upper rank's), which are
// the same additions this loop makes for the whole of n, so every bit is the same.
namespace cppgrad::train {

// Calls add(into, from) for each of the tree's additions over items [0, n), in the tree's order: afterwards item 0
// holds the sum (the other items hold partial sums). What an item is, and how it is added, is the caller's.
template <class Add>
void tree_sum(int n, Add&& add) {
  for (int stride = 1; stride < n; stride *= 2)
    for (int s = 0; s + stride < n; s += 2 * stride) add(s, s + stride);
}

}  // namespace cppgrad::train
