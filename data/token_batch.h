#pragma once
// Batches of token ids for a next-token model (T = the context, the model's block size; B rows):
//
//   idx      [B, T] int64  what the model reads
//   targets  [B, T] int64  the token that follows each position; -1 where nothing is predicted (padding), which the
//                          loss skips (cross_entropy's ignore_index)
//
// Lines mode (a line c1..cn, n <= T-1; <b> = 0):  idx = [0, c1, .., cn, 0, ..]   targets = [c1, .., cn, 0, -1, ..]
// Text mode (a window starting at s):             idx = tokens[s, s+T)           targets = tokens[s+1, s+T+1)
#include <cstdint>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace cppgrad::data {

struct TokenBatch {
  Tensor idx, targets;      // [B, T] int64 each
  std::int64_t tokens = 0;  // targets that are not -1: the positions the loss averages over
};

// Row r is lines[rows[r]]. std::invalid_argument for a row out of range or a line longer than context - 1.
TokenBatch lines_batch(const std::vector<std::vector<std::int64_t>>& lines, const std::vector<std::int64_t>& rows,
                       std::int64_t context);
// Row r is the window starting at starts[r]; std::invalid_argument unless 0 <= s and s + T + 1 <= tokens.size().
TokenBatch text_batch(const std::vector<std::int64_t>& tokens, const std::vector<std::int64_t>& starts,
                      std::int64_t context);

// `batch` numbers drawn uniformly from [0, count) with replacement, by `batch` calls of gen.randint(0, count), as
// words_pytorch.py draws its rows. Lines mode: count = lines.size(); text mode: count = tokens.size() - T, so the
// starts lie in [0, tokens.size() - T - 1] and every window has its T + 1 tokens.
std::vector<std::int64_t> random_rows(std::int64_t count, std::int64_t batch, Generator& gen);

// Validation in a fixed order, text mode: the non-overlapping windows 0, T, 2T, ... while s + T + 1 <= token_count.
// (Lines mode needs none: rows [first, first + B) of val_lines, the last batch clipped.)
std::vector<std::int64_t> eval_window_starts(std::int64_t token_count, std::int64_t context);

}  // namespace cppgrad::data
