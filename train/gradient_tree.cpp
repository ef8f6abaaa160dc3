#include "train/gradient_tree.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace cppgrad::train {

GradientTree::GradientTree(const std::vector<std::vector<Tensor>>& shard_params, int threads)
    : shard_params_(shard_params), shards_(static_cast<int>(shard_params.size())), threads_(std::max(1, threads)) {
  if (shards_ < 1 || !std::has_single_bit(static_cast<unsigned>(shards_)))
    throw std::invalid_argument("GradientTree: the shard count must be a power of two, got " + std::to_string(shards_));
  level_.assign(shard_params_[0].size(), std::vector<int>(static_cast<std::size_t>(shards_), kMissing));
  queue_.resize(static_cast<std::size_t>(threads_));
}

std::function<void(const Tensor&)> GradientTree::reports(int shard) {
  // A parameter's position, by its tensor: a step's few hundred, looked up once per backward pass each.
  auto index = std::make_shared<std::unordered_map<const TensorImpl*, std::size_t>>();
  const std::vector<Tensor>& params = shard_params_[static_cast<std::size_t>(shard)];
  for (std::size_t i = 0; i < params.size(); ++i) index->emplace(params[i].impl_ptr().get(), i);
  return [this, shard, index](const Tensor& leaf) {
    if (const auto it = index->find(leaf.impl_ptr().get()); it != index->end()) arrived(shard, it->second);
  };
}

void GradientTree::arrived(int shard, std::size_t param) {
  std::unique_lock lock(mutex_);
  int& level = level_[param][static_cast<std::size_t>(shard)];
  if (level != kMissing)
    throw std::logic_error("DataParallel: shard " + std::to_string(shard) + "'s parameter " + std::to_string(param) +
                           " got a gradient twice in one step: per_shard must run one backward pass (sum its losses "
                           "first)");
  level = 0;
  queue_ready(param, shard);
  add_queued(shard % threads_, /*let_go=*/true, lock);  // this thread's, queued by now (this one, or the others')
}

void GradientTree::queue_ready(std::size_t param, int s) {
  std::vector<int>& level = level_[param];
  const int k = level[static_cast<std::size_t>(s)];
  if (k < 0 || (1 << k) >= shards_) return;  // not complete, or the whole sum already
  const int stride = 1 << k;
  const int into = s % (2 * stride) == 0 ? s : s - stride, from = into + stride;  // s and its neighbour at level k
  if (level[static_cast<std::size_t>(into)] != k || level[static_cast<std::size_t>(from)] != k) return;
  level[static_cast<std::size_t>(into)] = level[static_cast<std::size_t>(from)] = kBusy;
  queue_[static_cast<std::size_t>(from % threads_)].push_back({param, into, from});
  queued_.notify_all();
}

void GradientTree::add_queued(int thread, bool let_go, std::unique_lock<std::mutex>& lock) {
  std::vector<Addition>& queue = queue_[static_cast<std::size_t>(thread)];
  while (!queue.empty()) {
    const Addition a = queue.back();
    queue.pop_back();
    lock.unlock();  // the addition itself outside the lock: the other threads' reports go on meanwhile
    const Tensor& from = shard_params_[static_cast<std::size_t>(a.from)][a.param];
    shard_params_[static_cast<std::size_t>(a.into)][a.param].grad().add_(from.grad());
    if (let_go) from.zero_grad();
    lock.lock();
    std::vector<int>& level = level_[a.param];
    level[static_cast<std::size_t>(a.from)] = kAdded;
    level[static_cast<std::size_t>(a.into)] = std::bit_width(static_cast<unsigned>(a.from - a.into));  // k + 1
    queue_ready(a.param, a.into);  // the sum may complete the level above
  }
}

GradientTree::OnThread::OnThread(GradientTree& tree, int thread) : tree_(tree), thread_(thread) {
  const std::lock_guard lock(tree_.mutex_);
  ++tree_.running_;
}

GradientTree::OnThread::~OnThread() {
  std::unique_lock lock(tree_.mutex_);
  --tree_.running_;
  tree_.queued_.notify_all();
  for (;;) {
    tree_.add_queued(thread_, /*let_go=*/true, lock);
    if (tree_.running_ == 0) break;  // no more reports can come: finish() makes what is left
    tree_.queued_.wait(lock);
  }
}

void GradientTree::finish() {
  std::unique_lock lock(mutex_);
  // Gradients added here stay until their threads drop them at the next step's start.
  const auto add_all_queued = [&] {
    for (bool any = true; any;) {
      any = false;
      for (int t = 0; t < threads_; ++t) {
        any = any || !queue_[static_cast<std::size_t>(t)].empty();
        add_queued(t, /*let_go=*/false, lock);
      }
    }
  };
  add_all_queued();
  for (std::size_t i = 0; i < level_.size(); ++i) {
    std::vector<int>& level = level_[i];
    bool reached = false;  // a parameter no shard reached keeps no gradient, as after one model's backward
    for (const int k : level) reached = reached || k != kMissing;
    if (!reached) continue;
    for (int s = 0; s < shards_; ++s) {
      if (level[static_cast<std::size_t>(s)] != kMissing) continue;
      const Tensor& p = shard_params_[static_cast<std::size_t>(s)][i];
      p.set_grad(Tensor::zeros(p.shape(), p.dtype()));
      level[static_cast<std::size_t>(s)] = 0;
      queue_ready(i, s);
    }
    add_all_queued();
  }
}

}  // namespace cppgrad::train
