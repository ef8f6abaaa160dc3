#include "data/bpe_train.h"

#include <fmt/format.h>

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
std::int32_t left_of(Key key) { return static_cast<std::int32_t>(key >> 32); }
std::int32_t right_of(Key key) { return static_cast<std::int32_t>(key & 0xFFFFFFFFu); }

// Where a pair occurs: the word's number in the high 32 bits, the byte offset of the pair's left token in that word
// in the low 32 (a text is at most 256 MiB, so both fit). Smaller is earlier in the text.
using Where = std::uint64_t;
Where where(std::uint32_t word, std::uint32_t byte_offset) { return (static_cast<Where>(word) << 32) | byte_offset; }

struct Word {
  std::vector<std::int32_t> tokens;
  std::int64_t count = 0;  // how many pieces are this word
};

struct PairStat {
  std::int64_t count = 0;
  // The words it occurs or occurred in, ascending, each once: the first pass visits words in order, and a merge
  // rewrites its words in order, so a list only ever grows at its back with a larger number. A word that loses the
  // pair stays listed (stale) until a scan passes it.
  std::vector<std::uint32_t> words;
};

// A heap entry: a pair's count and first occurrence when pushed. Either may since have become stale, but only
// lower in rank (a smaller count, a later first occurrence), never higher.
struct Entry {
  std::int64_t count;
  Where first;
  Key key;
};
// std::priority_queue puts its greatest on top; here "greatest" is the next merge: the most frequent pair, of equally
// frequent ones the first seen. No two pairs share a first occurrence, so this is a strict order on true entries.
struct RanksBelow {
  bool operator()(const Entry& a, const Entry& b) const {
    return a.count != b.count ? a.count < b.count : a.first > b.first;
  }
};

class Trainer {
 public:
  explicit Trainer(const std::vector<std::string_view>& pieces);
  std::vector<BpeMerge> run(std::int64_t num_merges, const BpeTrainProgress& progress);

 private:
  std::optional<Key> pop_most_frequent();
  Where first_occurrence(Key key, PairStat& stat);
  std::optional<std::uint32_t> byte_offset(const std::vector<std::int32_t>& tokens, Key key) const;
  void apply(Key key, std::int32_t new_id);

  std::vector<Word> words_;  // in order of first appearance in the text
  std::vector<std::uint32_t> token_bytes_;  // each token's length in bytes: 256 ones, then left + right per merge
  std::unordered_map<Key, PairStat> pairs_;  // the pairs that occur (count > 0)
  std::priority_queue<Entry, std::vector<Entry>, RanksBelow> heap_;  // at most one entry per pair
};

Trainer::Trainer(const std::vector<std::string_view>& pieces) : token_bytes_(256, 1) {
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
  std::vector<Entry> entries;  // each pair's first occurrence, in the order pairs are first seen
  for (std::uint32_t w = 0; w < words_.size(); ++w) {
    const auto& t = words_[w].tokens;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {  // tokens are bytes yet: index i is byte offset i
      const Key key = key_of(t[i], t[i + 1]);
      PairStat& stat = pairs_[key];
      if (stat.words.empty()) entries.push_back({0, where(w, static_cast<std::uint32_t>(i)), key});
      stat.count += words_[w].count;
      if (stat.words.empty() || stat.words.back() != w) stat.words.push_back(w);
    }
  }
  for (Entry& e : entries) e.count = pairs_.at(e.key).count;
  heap_ = decltype(heap_)(RanksBelow{}, std::move(entries));  // heapified in one pass
}

// The byte offset of the pair's first occurrence in a word's tokens; nullopt if the word no longer holds it.
std::optional<std::uint32_t> Trainer::byte_offset(const std::vector<std::int32_t>& tokens, Key key) const {
  std::uint32_t offset = 0;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (key_of(tokens[i], tokens[i + 1]) == key) return offset;
    offset += token_bytes_[static_cast<std::size_t>(tokens[i])];
  }
  return std::nullopt;
}

// The pair's first occurrence now: in the first of its listed words that still holds it. The stale words before
// that one are dropped from the list for good (a word never regains a pair it lost: only pairs holding a new token
// are ever created).
Where Trainer::first_occurrence(Key key, PairStat& stat) {
  auto& ws = stat.words;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    if (const auto offset = byte_offset(words_[ws[i]].tokens, key)) {
      const Where found = where(ws[i], *offset);
      ws.erase(ws.begin(), ws.begin() + static_cast<std::ptrdiff_t>(i));
      return found;
    }
  }
  throw std::logic_error("BPE train: a pair with a positive count is in none of its words");  // not reached
}

// The most frequent pair, first seen of equals; nullopt when no pair is left. The top entry ranks at least as high
// as every pair's true (count, first occurrence), since no entry ranks below its pair's truth; if the top entry is
// its pair's truth, that pair is the answer. If not, it goes back with the truth, lower, and the next top is tried.
std::optional<Key> Trainer::pop_most_frequent() {
  while (!heap_.empty()) {
    const Entry top = heap_.top();
    heap_.pop();
    const auto it = pairs_.find(top.key);
    if (it == pairs_.end()) continue;  // merged away from every word
    const Entry now{it->second.count, first_occurrence(top.key, it->second), top.key};
    if (now.count == top.count && now.first == top.first) return top.key;
    heap_.push(now);
  }
  return std::nullopt;
}

// Joins every occurrence of the pair in every word holding it; each word's pairs are uncounted before and
// recounted after (weighted by its count), and the net changes applied once. The pairs holding new_id are new:
// they go on the heap with their count and first occurrence.
void Trainer::apply(Key key, std::int32_t new_id) {
  const std::int32_t left = left_of(key), right = right_of(key);
  token_bytes_.push_back(token_bytes_[static_cast<std::size_t>(left)] + token_bytes_[static_cast<std::size_t>(right)]);
  const std::vector<std::uint32_t> holders = std::move(pairs_.at(key).words);
  pairs_.erase(key);  // after this merge no word holds it
  std::unordered_map<Key, std::int64_t> delta;
  std::unordered_map<Key, Where> created;  // each new pair's first occurrence (holders are visited in text order)
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
    std::uint32_t offset = 0;
    for (std::size_t i = 0; i + 1 < merged.size(); ++i) {
      const Key k = key_of(merged[i], merged[i + 1]);
      delta[k] += n;
      if (merged[i] == new_id || merged[i + 1] == new_id) {  // a pair this merge created: the word now holds it
        created.try_emplace(k, where(w, offset));
        auto& ws = pairs_[k].words;
        if (ws.empty() || ws.back() != w) ws.push_back(w);
      }
      offset += token_bytes_[static_cast<std::size_t>(merged[i])];
    }
    t = std::move(merged);
  }
  for (const auto& [k, d] : delta) {
    if (d == 0 || k == key) continue;
    const auto it = pairs_.find(k);  // there: an old pair was counted, a new one listed its words above
    it->second.count += d;
    if (it->second.count == 0) pairs_.erase(it);  // gone from every word, and it can never come back
  }
  for (const auto& [k, first] : created) heap_.push({pairs_.at(k).count, first, k});
}

std::vector<BpeMerge> Trainer::run(std::int64_t num_merges, const BpeTrainProgress& progress) {
  std::vector<BpeMerge> merges;
  for (std::int64_t m = 0; m < num_merges; ++m) {
    const std::optional<Key> key = pop_most_frequent();
    if (!key)
      throw std::invalid_argument(fmt::format("BPE train: the text has no pairs left to merge after {} merges", m));
    apply(*key, static_cast<std::int32_t>(256 + m));
    merges.push_back({left_of(*key), right_of(*key)});
    if (progress) progress(m + 1, num_merges);
  }
  return merges;
}

}  // namespace

std::vector<BpeMerge> train_bpe_merges(const std::vector<std::string_view>& pieces, std::int64_t num_merges,
                                       const BpeTrainProgress& progress) {
  if (num_merges < 0) throw std::invalid_argument(fmt::format("BPE train: {} merges (must be >= 0)", num_merges));
  return Trainer(pieces).run(num_merges, progress);
}

}  // namespace cppgrad::data
