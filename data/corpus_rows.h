#pragma once
// What a next-token trainer does with either shape of corpus (data/text_corpus.h), one overload per shape:
//
//                     Lines (T: the context)                    RunningText
//   random_row_count  the training lines                        the window starts: tokens - T
//   eval_rows         every line, in order                      the windows 0, T, 2T, ... (eval_window_starts)
//   batch             lines_batch of those lines                text_batch of the windows starting there
//   split_size        lines                                     characters
#include <cstdint>
#include <vector>

#include "data/text_corpus.h"
#include "data/token_batch.h"

namespace cppgrad::data {

enum class Split { train, validation };

std::int64_t random_row_count(const Lines& s, std::int64_t context);
std::int64_t random_row_count(const RunningText& s, std::int64_t context);

std::vector<std::int64_t> eval_rows(const Lines& s, Split split, std::int64_t context);
std::vector<std::int64_t> eval_rows(const RunningText& s, Split split, std::int64_t context);

TokenBatch batch(const Lines& s, Split split, const std::vector<std::int64_t>& rows, std::int64_t context);
TokenBatch batch(const RunningText& s, Split split, const std::vector<std::int64_t>& rows, std::int64_t context);

// The size of a split, and what it counts ("lines" / "characters").
std::int64_t split_size(const Lines& s, Split split);
std::int64_t split_size(const RunningText& s, Split split);
const char* split_unit(const Lines& s);
const char* split_unit(const RunningText& s);

}  // namespace cppgrad::data
