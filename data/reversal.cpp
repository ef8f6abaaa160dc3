#include "data/reversal.h"

#include "core/ops/select.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

namespace cppgrad::data {

void ReversalConfig::validate() const {
  if (vocab < 3)
    throw std::invalid_argument(fmt::format("vocab must be at least 3 (PAD plus two tokens), got {}", vocab));
  if (min_len < 1 || max_len < min_len)
    throw std::invalid_argument(fmt::format("lengths must satisfy 1 <= min-len <= max-len, got {}..{}", min_len, max_len));
  if (train_size < 1 || test_size < 1)
    throw std::invalid_argument(fmt::format("train and test sizes must be positive, got {} and {}", train_size, test_size));
  // Bounds that keep every index below (ids up to vocab + 2, positions i * length + j, 100 draws per sequence)
  // far from overflow; the trainer's own limits are much lower.
  constexpr std::int64_t kMaxId = std::int64_t{1} << 40, kMaxLen = std::int64_t{1} << 20, kMaxTokens = std::int64_t{1} << 40;
  if (vocab > kMaxId) throw std::invalid_argument(fmt::format("vocab must be at most 2^40, got {}", vocab));
  if (max_len > kMaxLen) throw std::invalid_argument(fmt::format("max-len must be at most 2^20, got {}", max_len));
  std::int64_t sequences = 0, tokens = 0;
  if (__builtin_add_overflow(train_size, test_size, &sequences) ||
      __builtin_mul_overflow(sequences, max_len + 2, &tokens) || tokens > kMaxTokens)
    throw std::invalid_argument(fmt::format("{} train and {} test sequences of length {} are more than 2^40 tokens",
                                            train_size, test_size, max_len));
  const std::int64_t distinct = distinct_sequences();
  if (test_size >= distinct)
    throw std::invalid_argument(fmt::format(
        "test set of {} sequences is too large: only {} distinct sequences exist for vocab {} and lengths {}..{}, and "
        "the training set must keep some", test_size, distinct, vocab, min_len, max_len));
}

std::int64_t ReversalConfig::distinct_sequences() const {
  std::int64_t total = 0;
  for (std::int64_t L = min_len; L <= max_len; ++L) {
    std::int64_t n = 1;
    for (std::int64_t i = 0; i < L; ++i)
      if (__builtin_mul_overflow(n, vocab - 1, &n)) return std::numeric_limits<std::int64_t>::max();
    if (__builtin_add_overflow(total, n, &total)) return std::numeric_limits<std::int64_t>::max();
  }
  return total;
}

namespace {

std::vector<std::int64_t> random_sequence(const ReversalConfig& c, Generator& gen) {
  const std::int64_t L = c.variable_length() ? gen.randint(c.min_len, c.max_len + 1) : c.max_len;
  std::vector<std::int64_t> s(static_cast<std::size_t>(L));
  for (auto& tok : s) tok = gen.randint(1, c.vocab);
  return s;
}

// n sequences none of which is in `exclude` (and, when `unique`, no two alike).
std::vector<std::vector<std::int64_t>> draw(const ReversalConfig& c, Generator& gen, std::int64_t n,
                                            const std::set<std::vector<std::int64_t>>& exclude, bool unique) {
  std::vector<std::vector<std::int64_t>> out;
  std::set<std::vector<std::int64_t>> taken;
  std::int64_t attempts = 0;
  while (static_cast<std::int64_t>(out.size()) < n) {
    if (++attempts > 100 * n + 100000)
      throw std::invalid_argument(fmt::format("could not draw {} distinct new sequences: the configuration has too few", n));
    auto s = random_sequence(c, gen);
    if (exclude.count(s) || (unique && !taken.insert(s).second)) continue;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

ReversalSet make_set(const ReversalConfig& c, std::vector<std::vector<std::int64_t>> sequences) {
  const std::int64_t N = static_cast<std::int64_t>(sequences.size()), S = c.max_len, T = c.target_len();
  ReversalSet set;
  set.src = Tensor::zeros({N, S}, DType::Int64);  // zeros = PAD
  set.target = Tensor::zeros({N, T}, DType::Int64);
  set.dec_in = Tensor::zeros({N, T}, DType::Int64);
  auto* src = set.src.mutable_data<std::int64_t>();
  auto* tgt = set.target.mutable_data<std::int64_t>();
  auto* dec = set.dec_in.mutable_data<std::int64_t>();
  for (std::int64_t i = 0; i < N; ++i) {
    const auto& s = sequences[i];
    const std::int64_t L = static_cast<std::int64_t>(s.size());
    if (L < 1 || L > S) throw std::invalid_argument(fmt::format("sequence of length {} does not fit max length {}", L, S));
    for (std::int64_t j = 0; j < L; ++j) {
      if (s[j] < 1 || s[j] >= c.vocab)
        throw std::invalid_argument(fmt::format("token {} is outside the vocabulary 1..{}", s[j], c.vocab - 1));
      src[i * S + j] = s[j];
      tgt[i * T + j] = s[L - 1 - j];
    }
    if (c.variable_length()) tgt[i * T + L] = c.eos();
    dec[i * T] = c.bos();
    for (std::int64_t j = 1; j < T; ++j) dec[i * T + j] = tgt[i * T + j - 1];
  }
  set.sequences = std::move(sequences);
  return set;
}

ReversalData make_reversal_data(const ReversalConfig& c) {
  c.validate();
  Generator gen(c.seed);
  // The training set may repeat a sequence (as the PyTorch reference does); the test set is distinct from it.
  auto train = draw(c, gen, c.train_size, {}, /*unique=*/false);
  const std::set<std::vector<std::int64_t>> seen(train.begin(), train.end());
  if (c.test_size > c.distinct_sequences() - static_cast<std::int64_t>(seen.size()))
    throw std::invalid_argument(fmt::format("test set of {} sequences cannot avoid the {} distinct training sequences "
                                            "({} exist in all)", c.test_size, seen.size(), c.distinct_sequences()));
  auto test = draw(c, gen, c.test_size, seen, /*unique=*/true);
  return {make_set(c, std::move(train)), make_set(c, std::move(test))};
}

ReversalSet make_test_set(const ReversalConfig& c, std::uint64_t seed) {
  c.validate();
  Generator train_gen(c.seed);
  auto train = draw(c, train_gen, c.train_size, {}, false);
  const std::set<std::vector<std::int64_t>> seen(train.begin(), train.end());
  Generator gen(seed ^ 0x5eed5eed5eedULL);
  return make_set(c, draw(c, gen, c.test_size, seen, true));
}

Batch gather_batch(const ReversalSet& set, const std::vector<std::int64_t>& rows, bool with_mask) {
  Tensor idx = Tensor::from_vector<std::int64_t>(rows, {static_cast<std::int64_t>(rows.size())});
  Batch b{index_select(set.src, 0, idx), index_select(set.target, 0, idx), index_select(set.dec_in, 0, idx), Tensor()};
  if (with_mask) {
    const std::int64_t B = b.src.shape()[0], S = b.src.shape()[1];
    b.src_mask = Tensor::zeros({B, 1, 1, S}, DType::Bool);
    const auto* s = b.src.data<std::int64_t>();
    bool* m = b.src_mask.mutable_data<bool>();
    for (std::int64_t i = 0; i < B * S; ++i) m[i] = s[i] != kPad;
  }
  return b;
}

std::vector<std::int64_t> epoch_order(std::int64_t n, std::uint64_t seed, std::int64_t epoch) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[i] = i;
  Generator gen(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(epoch) + 1);
  for (std::int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[gen.randint(0, i + 1)]);  // Fisher-Yates
  return order;
}

std::vector<std::vector<std::int64_t>> batch_rows(const std::vector<std::int64_t>& order, std::int64_t batch_size) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::size_t i = 0; i < order.size(); i += static_cast<std::size_t>(batch_size))
    out.emplace_back(order.begin() + i, order.begin() + std::min(order.size(), i + static_cast<std::size_t>(batch_size)));
  return out;
}

AccuracyCounts count_correct(const Tensor& predictions, const Tensor& target) {
  const std::int64_t B = target.shape()[0], T = target.shape()[1];
  const Tensor p = predictions.contiguous(), y = target.contiguous();
  const auto* pp = p.data<std::int64_t>();
  const auto* py = y.data<std::int64_t>();
  AccuracyCounts c;
  c.rows = B;
  for (std::int64_t b = 0; b < B; ++b) {
    bool row_ok = true;
    for (std::int64_t t = 0; t < T; ++t) {
      const bool same = pp[b * T + t] == py[b * T + t];
      row_ok = row_ok && same;
      if (py[b * T + t] == data::kPad) continue;
      ++c.tokens;
      c.right_tokens += same;
    }
    c.right_rows += row_ok;
  }
  return c;
}

}  // namespace cppgrad::data
