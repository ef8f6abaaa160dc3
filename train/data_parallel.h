#pragma once
// The pieces of a data-parallel step over worker replicas (a model and copies sharing its parameters through
// Module::share_parameters_with, each with gradients of its own): split the batch, weight each worker's loss, sum
// the gradients. The program runs each worker's forward and backward (core/parallel.h: run_in_parallel) in between:
//
//   for w: slice[w] = worker_slice(rows, w, n)               contiguous rows of the batch
//   share = loss_shares(loss terms per slice)                 e.g. the target tokens each slice holds
//   run_in_parallel(n, w: backward of share[w] * loss(slice[w]) on worker w)
//   sum_replica_gradients(parameters of every worker, n)     into worker 0, the model the optimizer steps
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace cppgrad::train {

// Worker w's slice of rows, of n workers: rows [size * w / n, size * (w + 1) / n), so sizes differ by at most one.
std::vector<std::int64_t> worker_slice(const std::vector<std::int64_t>& rows, int w, int n);

// Each worker's share of the batch's loss terms: counts[w] / sum(counts). A worker whose loss is the mean over its
// own terms, weighted by its share, gives summed gradients equal to those of the batch's mean loss.
std::vector<double> loss_shares(const std::vector<std::int64_t>& counts);

// Adds the gradients of workers 1..n-1 into worker 0's, parameter by parameter (worker_params[w][i] is worker w's
// i-th parameter, the same order for all), in worker order: a fixed order, so the sum is reproducible. In place, as
// backward accumulates a leaf's gradient: no allocation, and every block stays with the thread that allocated it.
void sum_replica_gradients(const std::vector<std::vector<Tensor>>& worker_params, int n);

}  // namespace cppgrad::train
