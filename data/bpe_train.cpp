#include "data/bpe_train.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <queue>
#include <span>
#include <stdexcept>
#include <unordered_map>

namespace cppgrad::data {

void BpeWordCounts::add(std::string_view piece) {
  if (2 * (words_.size() + 1) > index_.size()) grow_index();
  const std::size_t mask = index_.size() - 1;  // the size is a power of 2
  for (std::size_t slot = std::hash<std::string_view>{}(piece) & mask;; slot = (slot + 1) & mask) {
    if (index_[slot] == 0) {  // not seen before: a new word
      words_.push_back({piece, 1});
      index_[slot] = static_cast<std::uint32_t>(words_.size());
      return;
    }
    if (Word& word = words_[index_[slot] - 1]; word.bytes == piece) {
      ++word.count;
      return;
    }
  }
}

// Twice the slots, every word placed again.
void BpeWordCounts::grow_index() {
  index_.assign(std::max<std::size_t>(1024, 2 * index_.size()), 0);
  const std::size_t mask = index_.size() - 1;
  for (std::size_t w = 0; w < words_.size(); ++w) {
    std::size_t slot = std::hash<std::string_view>{}(words_[w].bytes) & mask;
    while (index_[slot] != 0) slot = (slot + 1) & mask;
    index_[slot] = static_cast<std::uint32_t>(w + 1);
  }
}

std::vector<BpeWordCounts::Word> BpeWordCounts::take_words() && {
  index_.clear();
  index_.shrink_to_fit();
  return std::move(words_);
}

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

// A word's tokens are tokens_[begin, begin + size): every word's tokens lie in one array, one word after another (a
// vector per word would cost more than the tokens of a short word; a text of random bytes has millions of distinct
// words). A merge only shortens a word, so it rewrites it where it is.
struct Word {
  std::uint32_t begin = 0, size = 0;
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
  explicit Trainer(std::vector<BpeWordCounts::Word> counted);
  std::vector<BpeMerge> run(std::int64_t num_merges, const BpeTrainProgress& progress);

 private:
  std::optional<Key> pop_most_frequent();
  Where first_occurrence(Key key, PairStat& stat);
  std::optional<std::uint32_t> byte_offset(std::span<const std::int32_t> tokens, Key key) const;
  void apply(Key key, std::int32_t new_id);
  std::span<std::int32_t> tokens_of(std::uint32_t w) { return {tokens_.data() + words_[w].begin, words_[w].size}; }

  std::vector<Word> words_;  // in order of first appearance in the text
  std::vector<std::int32_t> tokens_;
  std::vector<std::uint32_t> token_bytes_;  // each token's length in bytes: 256 ones, then left + right per merge
  std::unordered_map<Key, PairStat> pairs_;  // the pairs that occur (count > 0)
  std::priority_queue<Entry, std::vector<Entry>, RanksBelow> heap_;  // at most one entry per pair
};

Trainer::Trainer(std::vector<BpeWordCounts::Word> counted) : token_bytes_(256, 1) {
  std::size_t bytes_in_all = 0;
  for (const auto& word : counted) bytes_in_all += word.bytes.size();
  tokens_.reserve(bytes_in_all);
  words_.reserve(counted.size());
  for (const auto& [bytes, count] : counted) {
    words_.push_back({static_cast<std::uint32_t>(tokens_.size()), static_cast<std::uint32_t>(bytes.size()), count});
    for (const char c : bytes) tokens_.push_back(static_cast<unsigned char>(c));
  }
  counted.clear();  // the words are tokens now: their views go before the pairs take their memory
  counted.shrink_to_fit();
  std::vector<Entry> entries;  // each pair's first occurrence, in the order pairs are first seen
  for (std::uint32_t w = 0; w < words_.size(); ++w) {
    const auto t = tokens_of(w);
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
std::optional<std::uint32_t> Trainer::byte_offset(std::span<const std::int32_t> tokens, Key key) const {
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
    if (const auto offset = byte_offset(tokens_of(ws[i]), key)) {
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
    const std::span<std::int32_t> t = tokens_of(w);
    if (!byte_offset(t, key).has_value()) continue;  // a stale holder: the pair is no longer in it
    const std::int64_t n = words_[w].count;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) delta[key_of(t[i], t[i + 1])] -= n;
    std::size_t size = 0;  // the merged word, written over the word itself (it is never longer)
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (i + 1 < t.size() && t[i] == left && t[i + 1] == right) {
        t[size++] = new_id;
        ++i;
      } else {
        t[size++] = t[i];
      }
    }
    words_[w].size = static_cast<std::uint32_t>(size);
    const std::span<const std::int32_t> merged = t.first(size);
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

std::vector<BpeMerge> train_bpe_merges(BpeWordCounts words, std::int64_t num_merges,
                                       const BpeTrainProgress& progress) {
  if (num_merges < 0) throw std::invalid_argument(fmt::format("BPE train: {} merges (must be >= 0)", num_merges));
  Trainer trainer(std::move(words).take_words());  // the words now live as tokens: their index and views are freed
  return trainer.run(num_merges, progress);
}

std::vector<BpeMerge> train_bpe_merges(const std::vector<std::string_view>& pieces, std::int64_t num_merges,
                                       const BpeTrainProgress& progress) {
  BpeWordCounts words;
  for (const std::string_view piece : pieces) words.add(piece);
  return train_bpe_merges(std::move(words), num_merges, progress);
}

}  // namespace cppgrad::data
