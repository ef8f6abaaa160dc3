#include "train/data_parallel.h"

#include <bit>
#include <optional>

#include "core/kernels/packed_weights.h"

namespace cppgrad::train {

std::vector<std::int64_t> worker_slice(const std::vector<std::int64_t>& rows, int s, int n) {
  const std::size_t begin = rows.size() * s / n, end = rows.size() * (s + 1) / n;
  return std::vector<std::int64_t>(rows.begin() + begin, rows.begin() + end);
}

std::vector<double> loss_shares(const std::vector<std::int64_t>& counts) {
  std::vector<double> share;
  std::int64_t total = 0;
  for (const std::int64_t c : counts) {
    share.push_back(static_cast<double>(c));
    total += c;
  }
  if (total > 0)
    for (double& s : share) s /= static_cast<double>(total);
  return share;
}

void check_shards(int shards, int processes) {
  if (shards < 1 || !std::has_single_bit(static_cast<unsigned>(shards)))
    throw std::invalid_argument("data parallel: the shard count must be a power of two (1, 2, 4, 8, ...), got " +
                                std::to_string(shards));
  const bool power = processes >= 1 && std::has_single_bit(static_cast<unsigned>(processes));
  if (!power || shards % processes != 0)
    // A run that names no shard count gets default_shards (2): more processes need the flag.
    throw std::invalid_argument("data parallel: " + std::to_string(processes) + " processes cannot share " +
                                std::to_string(shards) + " shards: the process count must be a power of two that "
                                "divides the shard count (1, 2, 4, ... up to " + std::to_string(shards) + ")" +
                                (power ? "; give --shards " + std::to_string(processes) + " or a larger power of two"
                                       : std::string()));
}

int default_shards(std::int64_t batch_size) { return batch_size >= 2 ? 2 : 1; }

std::uint64_t shard_seed(std::uint64_t step_seed, int shard) {
  std::uint64_t z = step_seed + 0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(shard) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void check_processes_agree(ProcessLink& processes, const std::string& what, const std::string& text) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a
  for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  // two 32-bit halves: each exact in a double
  const std::vector<double> all = processes.all_gather({static_cast<double>(hash >> 32), static_cast<double>(hash & 0xFFFFFFFFULL)});
  for (std::size_t r = 1; r < all.size() / 2; ++r)
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
      throw std::invalid_argument("rank " + std::to_string(r) + "'s " + what + " differs from rank 0's: every process "
                                  "of a run must be started with the same flags and data");
}

bool any_process(ProcessLink& processes, bool mine) {
  for (const double v : processes.all_gather({mine ? 1.0 : 0.0}))
    if (v != 0) return true;
  return false;
}

void with_weights_packed_once(bool pack_once, const std::function<void()>& body) {
  std::optional<kernels::ReusePackedWeights> scope;
  if (pack_once) scope.emplace();
  body();
}

void tree_sum_gradients(const std::vector<std::vector<Tensor>>& shard_params, int threads) {
  const int n = static_cast<int>(shard_params.size());
  if (n == 0) return;
  const std::size_t count = shard_params[0].size();
  std::vector<bool> reached(count);
  for (std::size_t i = 0; i < count; ++i) {
    bool any = false;  // a parameter no shard reached keeps no gradient, as after one model's backward
    for (int s = 0; s < n; ++s) any = any || shard_params[s][i].grad().defined();
    reached[i] = any;
    if (!any) continue;
    for (int s = 0; s < n; ++s)
      if (!shard_params[s][i].grad().defined())
        shard_params[s][i].set_grad(Tensor::zeros(shard_params[s][i].shape(), shard_params[s][i].dtype()));
  }
  // Parameters side by side on the threads: each element's additions are the tree's, on whichever thread.
  const int t_count = std::max(1, std::min<int>(threads, static_cast<int>(count)));
  run_in_parallel(t_count, [&](int t) {
    for (std::size_t i = static_cast<std::size_t>(t); i < count; i += static_cast<std::size_t>(t_count)) {
      if (!reached[i]) continue;
      tree_sum(n, [&](int into, int from) { shard_params[into][i].grad().add_(shard_params[from][i].grad()); });
    }
  });
}

std::int64_t gradient_bytes(const std::vector<Tensor>& params) {
  std::int64_t bytes = 0;
  for (const Tensor& p : params)
    if (p.requires_grad()) bytes += p.numel() * static_cast<std::int64_t>(dtype_size(p.dtype()));
  return bytes;
}

}  // namespace cppgrad::train
