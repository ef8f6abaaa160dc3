#include "data/corpus_rows.h"

namespace cppgrad::data {

namespace {

template <typename S>
const auto& of(const S& s, Split split) {
  return split == Split::train ? s.train : s.val;
}

}  // namespace

std::int64_t random_row_count(const Lines& s, std::int64_t) { return static_cast<std::int64_t>(s.train.size()); }
std::int64_t random_row_count(const RunningText& s, std::int64_t context) {
  return static_cast<std::int64_t>(s.train.size()) - context;  // every window has its T + 1 tokens
}

std::vector<std::int64_t> eval_rows(const Lines& s, Split split, std::int64_t) {
  std::vector<std::int64_t> rows(of(s, split).size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int64_t>(i);
  return rows;
}
std::vector<std::int64_t> eval_rows(const RunningText& s, Split split, std::int64_t context) {
  return eval_window_starts(static_cast<std::int64_t>(of(s, split).size()), context);
}

TokenBatch batch(const Lines& s, Split split, const std::vector<std::int64_t>& rows, std::int64_t context) {
  return lines_batch(of(s, split), rows, context);
}
TokenBatch batch(const RunningText& s, Split split, const std::vector<std::int64_t>& rows, std::int64_t context) {
  return text_batch(of(s, split), rows, context);
}

std::int64_t split_size(const Lines& s, Split split) { return static_cast<std::int64_t>(of(s, split).size()); }
std::int64_t split_size(const RunningText& s, Split split) { return static_cast<std::int64_t>(of(s, split).size()); }
const char* split_unit(const Lines&) { return "lines"; }
const char* split_unit(const RunningText&) { return "characters"; }

}  // namespace cppgrad::data
