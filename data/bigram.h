#pragma once
// The count-based bigram model with add-one smoothing: the baseline a next-token model is compared with (makemore's
// first model). It knows only the previous token, so the gap between its loss and a transformer's is what the
// longer context buys.
//
//   P(next | token) = (n(token, next) + 1) / (n(token) + V)     n(token) = the pairs counted starting at token
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "data/text_corpus.h"

namespace cppgrad::data {

class BigramModel {
 public:
  explicit BigramModel(std::int64_t vocab);  // V >= 1; std::invalid_argument otherwise
  // Counts every (token, next) pair of a sequence: for lines pass with_boundaries(line), for text the token stream.
  // std::invalid_argument for an id outside [0, V).
  void count(const std::vector<std::int64_t>& sequence);
  double probability(std::int64_t token, std::int64_t next) const;
  // Mean negative log-likelihood in nats per predicted token over every pair of these sequences (the tokens after
  // the first of each); std::invalid_argument when they hold no pair.
  double mean_nll(const std::vector<std::vector<std::int64_t>>& sequences) const;
  double mean_nll_stream(const std::vector<std::int64_t>& sequence) const;  // one sequence, not copied into a list
  std::int64_t vocab() const { return vocab_; }

 private:
  void check_id(std::int64_t id, const char* op) const;
  void add_nll(const std::vector<std::int64_t>& s, double& total, std::int64_t& pairs) const;  // -log P of each pair
  std::int64_t vocab_;
  std::vector<std::int64_t> row_totals_;                    // [V] n(token)
  std::unordered_map<std::uint64_t, std::int64_t> pairs_;  // token * V + next -> n(token, next); sparse, as a large
                                                           // vocab (CJK text: thousands) would make V^2 counts
};

std::vector<std::int64_t> with_boundaries(const std::vector<std::int64_t>& line);  // [0, line..., 0]

// The bigram's validation loss: fitted on the training split, scored on the validation split, at the positions the
// GPT's loss counts (lines: every target including the closing <b>; running text: every next token of the stream).
// vocab: the tokenizer's size.
double bigram_val_loss(std::int64_t vocab, const Lines& splits);
double bigram_val_loss(std::int64_t vocab, const RunningText& splits);
double bigram_val_loss(const TextCorpus& corpus);  // of the shape it holds

}  // namespace cppgrad::data
