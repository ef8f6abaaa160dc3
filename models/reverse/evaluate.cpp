#include "models/reverse/evaluate.h"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>

namespace cppgrad::reverse {

Trainer load_trained(const std::string& path, std::int64_t threads,
                     const std::function<void(std::int64_t)>& set_threads) {
  if (threads < 0 || threads > kMaxThreads)
    throw std::invalid_argument(fmt::format("--threads must be in 0..{}", kMaxThreads));
  TrainConfig config = read_checkpoint_config(path);
  config.threads = threads;
  if (set_threads) set_threads(threads);
  Trainer trainer(config);
  trainer.load(path);
  trainer.model().eval();
  return trainer;
}

FreshEvaluation evaluate_fresh(const nn::Seq2SeqTransformer& model, const data::ReversalConfig& config,
                               std::uint64_t seed) {
  FreshEvaluation e;
  e.test = data::make_test_set(config, seed);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(e.test.size()));
  std::iota(rows.begin(), rows.end(), std::int64_t{0});
  const data::Batch all = data::gather_batch(e.test, rows, config.variable_length());
  e.predictions = greedy_decode(model, all.src, all.src_mask, config);
  e.accuracy = accuracy(e.predictions, e.test.target);
  return e;
}

}  // namespace cppgrad::reverse
