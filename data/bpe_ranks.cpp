#include "data/bpe_ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <stdexcept>

namespace cppgrad::data {

namespace {

std::uint64_t pair_key(std::int64_t left, std::int64_t right) {
  return (static_cast<std::uint64_t>(left) << 32) | static_cast<std::uint64_t>(right);
}

// Pieces up to this many bytes take the simple quadratic scan (fastest for words); longer ones a heap, so a
// megabyte without a space costs n log n, not n^2.
constexpr std::size_t kShortPiece = 256;

}  // namespace

BpeRanks::ByteIds BpeRanks::identity_bytes() {
  ByteIds ids{};
  for (std::size_t b = 0; b < 256; ++b) ids[b] = static_cast<std::int64_t>(b);
  return ids;
}

BpeRanks::BpeRanks(const ByteIds& byte_ids, std::vector<BpeMerge> merges)
    : byte_ids_(byte_ids), merges_(std::move(merges)) {
  vocab_.resize(256 + merges_.size());
  std::array<bool, 256> seen{};
  for (std::size_t b = 0; b < 256; ++b) {
    const std::int64_t id = byte_ids_[b];
    if (id < 0 || id > 255 || seen[static_cast<std::size_t>(id)])
      throw std::invalid_argument(fmt::format("BPE byte ids: byte {} has id {}, not a permutation of 0..255", b, id));
    seen[static_cast<std::size_t>(id)] = true;
    vocab_[static_cast<std::size_t>(id)] = std::string(1, static_cast<char>(b));
  }
  if (merges_.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max() - 256))
    throw std::invalid_argument(fmt::format("BPE: {} merges is too many", merges_.size()));
  rank_.reserve(merges_.size());
  for (std::size_t r = 0; r < merges_.size(); ++r) {
    const auto [left, right] = merges_[r];
    const auto existing = static_cast<std::int64_t>(256 + r);  // tokens that exist before merge r
    if (left < 0 || left >= existing || right < 0 || right >= existing)
      throw std::invalid_argument(fmt::format("BPE merge {} ({} {}) joins a token that does not exist yet (ids < {})",
                                              r, left, right, existing));
    if (!rank_.emplace(pair_key(left, right), static_cast<std::int32_t>(r)).second)
      throw std::invalid_argument(fmt::format("BPE merge {} ({} {}) repeats merge {}", r, left, right,
                                              rank_.at(pair_key(left, right))));
    vocab_[256 + r] = vocab_[static_cast<std::size_t>(left)] + vocab_[static_cast<std::size_t>(right)];
  }
}

std::optional<std::int64_t> BpeRanks::rank(std::int64_t left, std::int64_t right) const {
  if (left < 0 || right < 0 || left >= size() || right >= size()) return std::nullopt;
  const auto it = rank_.find(pair_key(left, right));
  if (it == rank_.end()) return std::nullopt;
  return it->second;
}

std::int32_t BpeRanks::pair_rank(std::int32_t left, std::int32_t right) const {
  const auto it = rank_.find(pair_key(left, right));
  return it == rank_.end() ? kNoRank : it->second;
}

void BpeRanks::encode_piece(std::string_view piece, std::vector<std::int64_t>& out) const {
  if (piece.size() == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
  } else if (piece.size() <= kShortPiece) {
    encode_short(piece, out);
  } else {
    encode_long(piece, out);
  }
}

// ids[i]: the i-th token; ranks[i]: the rank of the pair (ids[i], ids[i+1]). Each step joins the leftmost pair of
// lowest rank and re-ranks only its two neighbours' pairs.
void BpeRanks::encode_short(std::string_view piece, std::vector<std::int64_t>& out) const {
  std::int32_t ids[kShortPiece], ranks[kShortPiece];
  std::size_t n = piece.size();
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>(byte_ids_[static_cast<unsigned char>(piece[i])]);
  for (std::size_t i = 0; i + 1 < n; ++i) ranks[i] = pair_rank(ids[i], ids[i + 1]);
  while (n > 1) {
    std::size_t best = 0;
    for (std::size_t i = 1; i + 1 < n; ++i)
      if (ranks[i] < ranks[best]) best = i;
    if (ranks[best] == kNoRank) break;
    ids[best] = 256 + ranks[best];  // join ids[best], ids[best + 1]
    std::copy(ids + best + 2, ids + n, ids + best + 1);
    if (best + 2 < n) std::copy(ranks + best + 2, ranks + n - 1, ranks + best + 1);  // pairs right of the join
    --n;
    if (best + 1 < n) ranks[best] = pair_rank(ids[best], ids[best + 1]);
    if (best > 0) ranks[best - 1] = pair_rank(ids[best - 1], ids[best]);
  }
  out.insert(out.end(), ids, ids + n);
}

// The same joins in the same order, for long pieces: the tokens form a linked list and the candidate pairs wait in a
// min-heap by (rank, position), so the leftmost pair of lowest rank is on top. An entry is stale when its left
// token was joined away or its pair changed since it was pushed; stale entries are skipped.
// Positions are 32-bit (a piece of a gigabyte costs 13 bytes a byte here, not 21); a longer piece is refused.
void BpeRanks::encode_long(std::string_view piece, std::vector<std::int64_t>& out) const {
  using Position = std::uint32_t;
  constexpr Position kNone = std::numeric_limits<Position>::max();
  if (piece.size() >= kNone)
    throw std::invalid_argument(fmt::format("BPE: a piece of {} bytes, more than the 2^32 - 1 one may have",
                                            piece.size()));
  const auto n = static_cast<Position>(piece.size());
  std::vector<std::int32_t> ids(n);
  std::vector<Position> next(n), prev(n);
  for (Position i = 0; i < n; ++i) {
    ids[i] = static_cast<std::int32_t>(byte_ids_[static_cast<unsigned char>(piece[i])]);
    next[i] = i + 1 < n ? i + 1 : kNone;
    prev[i] = i > 0 ? i - 1 : kNone;
  }
  using Entry = std::pair<std::int32_t, Position>;  // (rank, position of the pair's left token)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  auto push = [&](Position i) {
    if (i == kNone || next[i] == kNone) return;
    if (const std::int32_t r = pair_rank(ids[i], ids[next[i]]); r != kNoRank) heap.emplace(r, i);
  };
  for (Position i = 0; i + 1 < n; ++i) push(i);
  std::vector<bool> alive(n, true);
  while (!heap.empty()) {
    const auto [r, i] = heap.top();
    heap.pop();
    if (!alive[i] || next[i] == kNone || pair_rank(ids[i], ids[next[i]]) != r) continue;  // stale
    const Position j = next[i];
    ids[i] = 256 + r;
    alive[j] = false;
    next[i] = next[j];
    if (next[j] != kNone) prev[next[j]] = i;
    push(prev[i]);
    push(i);
  }
  for (Position i = 0; i != kNone; i = next[i]) out.push_back(ids[i]);
}

}  // namespace cppgrad::data
