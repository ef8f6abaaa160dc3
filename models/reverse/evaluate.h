#pragma once
// A trained checkpoint put to use: loaded for evaluation, and scored on a test set it has never seen, as
// `cppgrad-reverse eval` and `predict` do; a test or the page can load and score a model the same way.
#include <cstdint>
#include <functional>
#include <string>

#include "data/reversal.h"
#include "models/reverse/greedy.h"
#include "models/reverse/trainer.h"
#include "nn/seq2seq.h"

namespace cppgrad::reverse {

// The checkpoint at `path` in a Trainer of its own config with `threads` (0: OpenMP's default), its model in eval
// mode. set_threads(threads), when given, is called once the config is read and before the model is built (a program's
// train::set_threads, which also says when the threads are more than the cores). Throws std::invalid_argument for
// threads outside 0..kMaxThreads (before reading anything), std::runtime_error naming the file when it cannot be read.
Trainer load_trained(const std::string& path, std::int64_t threads,
                     const std::function<void(std::int64_t)>& set_threads = nullptr);

// A fresh test set from `seed` (data::make_test_set), decoded greedily in one batch.
struct FreshEvaluation {
  data::ReversalSet test;  // N sequences
  Tensor predictions;      // [N, T] int64
  Accuracy accuracy;
};
FreshEvaluation evaluate_fresh(const nn::Seq2SeqTransformer& model, const data::ReversalConfig& config,
                               std::uint64_t seed);

}  // namespace cppgrad::reverse
