#include "data/bpe_train.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <queue>
#include <stdexcept>
#include <unordered_map>

namespace cppgrad::data {

namespace {

using Key = std::uint64_t;  // a pair (left << 32 | right)
Key key_of(std::int32_t left, std::int32_t right) {
  return (static_cast<Key>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

struct Word {
  std::vector<std::int32_t> tokens;
  std::int64_t count = 0;  // how many pieces are this word
};

struct PairStat {
  std::int64_t count = 0;
  std::vector<std::uint32_t> words;  // the words it occurs or occurred in (may hold stale ones and repeats)
};

// Where a pair first occurs in the text: (earliest word holding it, token index there); words are numbered in
// order of first appearance, so this orders pairs by first occurrence.
using FirstSeen = std::pair<std::uint32_t, std::size_t>;

class Trainer {
 public:
  explicit Trainer(const std::vector<std::string_view>& pieces);
  std::vector<BpeMerge> run(std::int64_t num_merges);

 private:
  std::optional<Key> pop_most_frequent();
  FirstSeen first_seen(Key key);
  void apply(Key key, std::int32_t new_id);

  std::vector<Word> words_;
  std::unordered_map<Key, PairStat> pairs_;
  std::priority_queue<std::pair<std::int64_t, Key>> heap_;  // (count, pair); an entry is stale if count differs
};

Trainer::Trainer(const std::vector<std::string_view>& pieces) {
  std::unordered_map<std::string_view, std::uint32_t> index;  // word -> its number
  for (const std::string_view piece : pieces) {
    const auto [it, added] = index.emplace(piece, static_cast<std::uint32_t>(words_.size()));
    if (added) {
      Word word;
      for (const char c : piece) word.tokens.push_back(static_cast<unsigned char>(c));
      words_.push_back(std::move(word));
    }
    ++words_[it->second].count;
  }
  for (std::uint32_t w = 0; w < words_.size(); ++w) {
    const auto& t = words_[w].tokens;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      PairStat& stat = pairs_[key_of(t[i], t[i + 1])];
      stat.count += words_[w].count;
      if (stat.words.empty() || stat.words.back() != w) stat.words.push_back(w);
    }
  }
  for (const auto& [key, stat] : pairs_) heap_.emplace(stat.count, key);
}

FirstSeen Trainer::first_seen(Key key) {
  auto& ws = pairs_[key].words;
  std::sort(ws.begin(), ws.end());
  ws.erase(std::unique(ws.begin(), ws.end()), ws.end());
  for (const std::uint32_t w : ws) {
    const auto& t = words_[w].tokens;
    for (std::size_t i = 0; i + 1 < t.size(); ++i)
      if (key_of(t[i], t[i + 1]) == key) return {w, i};
  }
  return {UINT32_MAX, 0};  // not reached for a pair with a positive count
}

// The most frequent pair, first seen of equals; nullopt when no pair is left.
std::optional<Key> Trainer::pop_most_frequent() {
  std::vector<Key> ties;
  std::int64_t top = 0;
  while (!heap_.empty()) {
    const auto [count, key] = heap_.top();
    if (!ties.empty() && count < top) break;
    heap_.pop();
    const std::int64_t now = pairs_[key].count;
    if (now != count) {  // stale: a lower count was never pushed, so push it now (a higher one was)
      if (now > 0 && now < count) heap_.emplace(now, key);
      continue;
    }
    if (now <= 0) continue;
    top = count;
    if (std::find(ties.begin(), ties.end(), key) == ties.end()) ties.push_back(key);
  }
  if (ties.empty()) return std::nullopt;
  Key best = ties[0];
  FirstSeen best_seen = first_seen(best);
  for (std::size_t i = 1; i < ties.size(); ++i)
    if (const FirstSeen seen = first_seen(ties[i]); seen < best_seen) best = ties[i], best_seen = seen;
  for (const Key key : ties)
    if (key != best) heap_.emplace(top, key);  // the others wait for a later merge
  return best;
}

// Joins every occurrence of the pair in every word holding it; each word's pairs are uncounted before and
// recounted after (weighted by its count), and the net changes applied once.
void Trainer::apply(Key key, std::int32_t new_id) {
  const auto left = static_cast<std::int32_t>(key >> 32), right = static_cast<std::int32_t>(key & 0xFFFFFFFFu);
  std::vector<std::uint32_t> holders = std::move(pairs_[key].words);
  std::sort(holders.begin(), holders.end());
  holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
  std::unordered_map<Key, std::int64_t> delta;
  for (const std::uint32_t w : holders) {
    auto& t = words_[w].tokens;
    const std::int64_t n = words_[w].count;
    std::vector<std::int32_t> merged;
    merged.reserve(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (i + 1 < t.size() && t[i] == left && t[i + 1] == right) {
        merged.push_back(new_id);
        ++i;
      } else {
        merged.push_back(t[i]);
      }
    }
    if (merged.size() == t.size()) continue;  // a stale holder: the pair is no longer in it
    for (std::size_t i = 0; i + 1 < t.size(); ++i) delta[key_of(t[i], t[i + 1])] -= n;
    for (std::size_t i = 0; i + 1 < merged.size(); ++i) {
      const Key k = key_of(merged[i], merged[i + 1]);
      delta[k] += n;
      if (merged[i] == new_id || merged[i + 1] == new_id) {  // a pair this merge created: the word now holds it
        auto& ws = pairs_[k].words;
        if (ws.empty() || ws.back() != w) ws.push_back(w);
      }
    }
    t = std::move(merged);
  }
  for (const auto& [k, d] : delta) {
    if (d == 0) continue;
    PairStat& stat = pairs_[k];
    stat.count += d;
    if (d > 0) heap_.emplace(stat.count, k);
  }
}

std::vector<BpeMerge> Trainer::run(std::int64_t num_merges) {
  std::vector<BpeMerge> merges;
  for (std::int64_t m = 0; m < num_merges; ++m) {
    const std::optional<Key> key = pop_most_frequent();
    if (!key)
      throw std::invalid_argument(fmt::format("BPE train: the text has no pairs left to merge after {} merges", m));
    apply(*key, static_cast<std::int32_t>(256 + m));
    merges.push_back({static_cast<std::int64_t>(*key >> 32), static_cast<std::int64_t>(*key & 0xFFFFFFFFu)});
  }
  return merges;
}

}  // namespace

std::vector<BpeMerge> train_bpe_merges(const std::vector<std::string_view>& pieces, std::int64_t num_merges) {
  if (num_merges < 0) throw std::invalid_argument(fmt::format("BPE train: {} merges (must be >= 0)", num_merges));
  return Trainer(pieces).run(num_merges);
}

}  // namespace cppgrad::data
