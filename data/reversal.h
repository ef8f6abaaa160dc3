#pragma once
// The sequence-reversal task: src = [a, b, c, ...] -> target = [..., c, b, a].
//
// Token ids: PAD = 0; the sequence tokens are 1 .. vocab-1; BOS = vocab starts the decoder input; with variable
// lengths EOS = vocab+1 ends each target (the model must learn where to stop). Fixed-length data has no EOS.
//
//   src     [N, S]  tokens, PAD after a short sequence's end          S = max length
//   target  [N, T]  reversed tokens (+ EOS), PAD after                T = S (+1 with EOS)
//   dec_in  [N, T]  [BOS] + target[:-1]: what the decoder sees when trained with teacher forcing
#include <cstdint>
#include <string>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace cppgrad::data {

inline constexpr std::int64_t kPad = 0;

struct ReversalConfig {
  std::int64_t vocab = 10;     // ids 0..vocab-1, of which 1..vocab-1 are sequence tokens
  std::int64_t min_len = 8;    // min_len == max_len: fixed length
  std::int64_t max_len = 8;
  std::int64_t train_size = 5000;
  std::int64_t test_size = 500;
  std::uint64_t seed = 42;

  bool variable_length() const { return min_len != max_len; }
  std::int64_t bos() const { return vocab; }
  std::int64_t eos() const { return vocab + 1; }  // used only with variable lengths
  std::int64_t target_len() const { return max_len + (variable_length() ? 1 : 0); }
  std::int64_t decoder_vocab() const { return vocab + (variable_length() ? 2 : 1); }  // + BOS (+ EOS)
  // Logits cover every id a target can hold: up to EOS = vocab+1 with variable lengths (BOS's logit is then
  // simply never a target), up to vocab-1 otherwise.
  std::int64_t output_vocab() const { return variable_length() ? eos() + 1 : vocab; }
  // Throws std::invalid_argument with a one-line reason when the configuration cannot work.
  void validate() const;
  // How many distinct sequences the configuration can produce (saturating at INT64_MAX).
  std::int64_t distinct_sequences() const;
};

// A set of sequences and their padded tensors.
struct ReversalSet {
  std::vector<std::vector<std::int64_t>> sequences;  // the unpadded sources
  Tensor src;      // [N, S] int64
  Tensor target;   // [N, T] int64
  Tensor dec_in;   // [N, T] int64
  std::int64_t size() const { return static_cast<std::int64_t>(sequences.size()); }
};

// Builds the tensors for given sequences (also used by `predict` for one user sequence).
ReversalSet make_set(const ReversalConfig& config, std::vector<std::vector<std::int64_t>> sequences);

// The train and test sets from config.seed; no test sequence appears in the training set.
struct ReversalData {
  ReversalSet train, test;
};
ReversalData make_reversal_data(const ReversalConfig& config);

// A fresh test set from another seed, still disjoint from the training set of `config` (for `eval`).
ReversalSet make_test_set(const ReversalConfig& config, std::uint64_t seed);

// One batch of rows of a set.
struct Batch {
  Tensor src, target, dec_in;  // [B, S], [B, T], [B, T]
  Tensor src_mask;             // [B, 1, 1, S] bool key padding (true = real token); undefined for fixed length
};

Batch gather_batch(const ReversalSet& set, const std::vector<std::int64_t>& rows, bool with_mask);

// Predictions scored against their targets, as counts to add up over batches (the teacher-forced counts a training
// step reports, train/reversal_step.h, and greedy decoding's, models/reverse/greedy.h).
struct AccuracyCounts {
  std::int64_t right_rows = 0, rows = 0;
  std::int64_t right_tokens = 0, tokens = 0;
  AccuracyCounts& operator+=(const AccuracyCounts& o) {
    right_rows += o.right_rows, rows += o.rows;
    right_tokens += o.right_tokens, tokens += o.tokens;
    return *this;
  }
};

// predictions, target: [B, T]; PAD positions of the target are not counted as tokens, but a sequence is only
// right when the prediction also stops where the target does.
AccuracyCounts count_correct(const Tensor& predictions, const Tensor& target);

// The row order of an epoch: a shuffle that depends only on (seed, epoch), so a resumed run replays it exactly.
std::vector<std::int64_t> epoch_order(std::int64_t n, std::uint64_t seed, std::int64_t epoch);

// Batches of an epoch in order; the last one may be smaller.
std::vector<std::vector<std::int64_t>> batch_rows(const std::vector<std::int64_t>& order, std::int64_t batch_size);

}  // namespace cppgrad::data
