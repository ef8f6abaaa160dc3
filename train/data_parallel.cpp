#include "train/data_parallel.h"

namespace cppgrad::train {

std::vector<std::int64_t> worker_slice(const std::vector<std::int64_t>& rows, int w, int n) {
  const std::size_t begin = rows.size() * w / n, end = rows.size() * (w + 1) / n;
  return std::vector<std::int64_t>(rows.begin() + begin, rows.begin() + end);
}

std::vector<double> loss_shares(const std::vector<std::int64_t>& counts) {
  std::vector<double> share;
  std::int64_t total = 0;
  for (const std::int64_t c : counts) {
    share.push_back(static_cast<double>(c));
    total += c;
  }
  for (double& s : share) s /= static_cast<double>(total);
  return share;
}

void sum_replica_gradients(const std::vector<std::vector<Tensor>>& worker_params, int n) {
  const std::vector<Tensor>& master = worker_params[0];
  for (int w = 1; w < n; ++w) {
    const std::vector<Tensor>& replica = worker_params[w];
    for (std::size_t i = 0; i < master.size(); ++i) {
      const Tensor g = replica[i].grad(), mine = master[i].grad();
      if (!g.defined()) continue;
      if (mine.defined()) mine.add_(g);
      else master[i].set_grad(g.clone());
    }
  }
}

}  // namespace cppgrad::train
