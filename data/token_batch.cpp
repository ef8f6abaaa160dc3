#include "data/token_batch.h"

#include <fmt/format.h>

#include <stdexcept>

namespace cppgrad::data {

namespace {

// [B, T] zeros, refusing a product that overflows before anything is allocated.
Tensor batch_tensor(std::size_t rows, std::int64_t context, const char* op) {
  std::int64_t elements = 0;
  if (context < 1) throw std::invalid_argument(fmt::format("{}: context must be positive, got {}", op, context));
  if (__builtin_mul_overflow(static_cast<std::int64_t>(rows), context, &elements) || elements > (std::int64_t{1} << 40))
    throw std::invalid_argument(fmt::format("{}: a batch of {} rows of {} tokens is too large", op, rows, context));
  return Tensor::zeros({static_cast<std::int64_t>(rows), context}, DType::Int64);
}

}  // namespace

TokenBatch lines_batch(const std::vector<std::vector<std::int64_t>>& lines, const std::vector<std::int64_t>& rows,
                       std::int64_t context) {
  const std::int64_t T = context;
  TokenBatch b{batch_tensor(rows.size(), T, "lines_batch"), batch_tensor(rows.size(), T, "lines_batch"), 0};
  auto* idx = b.idx.mutable_data<std::int64_t>();  // zeros: <b> at position 0 and the padding after the line
  auto* tgt = b.targets.mutable_data<std::int64_t>();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::int64_t row = rows[r];
    if (row < 0 || row >= static_cast<std::int64_t>(lines.size()))
      throw std::invalid_argument(fmt::format("lines_batch: row {} is outside [0, {})", row, lines.size()));
    const auto& line = lines[static_cast<std::size_t>(row)];
    const std::int64_t n = static_cast<std::int64_t>(line.size());
    if (n > T - 1)
      throw std::invalid_argument(fmt::format("lines_batch: line {} has {} tokens; context {} holds at most {}", row, n, T, T - 1));
    std::int64_t* x = idx + static_cast<std::int64_t>(r) * T;
    std::int64_t* y = tgt + static_cast<std::int64_t>(r) * T;
    for (std::int64_t j = 0; j < n; ++j) {
      x[j + 1] = line[static_cast<std::size_t>(j)];  // reads <b> c1 .. cn
      y[j] = line[static_cast<std::size_t>(j)];      // predicts c1 .. cn
    }
    y[n] = 0;                                        // ... and then the closing <b>
    for (std::int64_t j = n + 1; j < T; ++j) y[j] = -1;
    b.tokens += n + 1;
  }
  return b;
}

TokenBatch text_batch(const std::vector<std::int64_t>& tokens, const std::vector<std::int64_t>& starts,
                      std::int64_t context) {
  const std::int64_t T = context, size = static_cast<std::int64_t>(tokens.size());
  TokenBatch b{batch_tensor(starts.size(), T, "text_batch"), batch_tensor(starts.size(), T, "text_batch"), 0};
  auto* idx = b.idx.mutable_data<std::int64_t>();
  auto* tgt = b.targets.mutable_data<std::int64_t>();
  for (std::size_t r = 0; r < starts.size(); ++r) {
    const std::int64_t s = starts[r];
    if (s < 0 || s > size - T - 1)
      throw std::invalid_argument(fmt::format("text_batch: a window of {} + 1 tokens cannot start at {} in {} tokens",
                                              T, s, size));
    for (std::int64_t j = 0; j < T; ++j) {
      idx[static_cast<std::int64_t>(r) * T + j] = tokens[static_cast<std::size_t>(s + j)];
      tgt[static_cast<std::int64_t>(r) * T + j] = tokens[static_cast<std::size_t>(s + j + 1)];
    }
    b.tokens += T;
  }
  return b;
}

std::vector<std::int64_t> random_rows(std::int64_t count, std::int64_t batch, Generator& gen) {
  if (count < 1) throw std::invalid_argument(fmt::format("random_rows: nothing to draw from (count {})", count));
  if (batch < 0) throw std::invalid_argument(fmt::format("random_rows: batch must not be negative, got {}", batch));
  std::vector<std::int64_t> rows(static_cast<std::size_t>(batch));
  for (auto& row : rows) row = gen.randint(0, count);
  return rows;
}

std::vector<std::int64_t> eval_window_starts(std::int64_t token_count, std::int64_t context) {
  if (context < 1)
    throw std::invalid_argument(fmt::format("eval_window_starts: context must be positive, got {}", context));
  std::vector<std::int64_t> starts;
  for (std::int64_t s = 0; token_count - s > context; s += context) starts.push_back(s);  // s + T + 1 <= count
  return starts;
}

}  // namespace cppgrad::data
