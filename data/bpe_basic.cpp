#include "data/bpe_basic.h"

#include <fmt/format.h>

#include <stdexcept>

namespace cppgrad::data::bpe_basic {

void get_stats(std::span<const Id> ids, PairCounts& counts) {
  for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
    const Pair pair{ids[i], ids[i + 1]};
    if (counts.count[pair]++ == 0) counts.first_seen.push_back(pair);
  }
}

Pair most_frequent(const PairCounts& counts) {
  Pair best = counts.first_seen.at(0);
  for (const Pair& pair : counts.first_seen)
    if (counts.count.at(pair) > counts.count.at(best)) best = pair;  // strictly more: the earlier pair keeps a tie
  return best;
}

std::vector<Id> merge(std::span<const Id> ids, Pair pair, Id new_id) {
  std::vector<Id> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i + 1 < ids.size() && ids[i] == pair.first && ids[i + 1] == pair.second) {
      out.push_back(new_id);
      ++i;  // the pair's second token is consumed too
    } else {
      out.push_back(ids[i]);
    }
  }
  return out;
}

std::vector<Id> bytes_to_ids(std::string_view text) {
  std::vector<Id> ids;
  for (const char c : text) ids.push_back(static_cast<unsigned char>(c));
  return ids;
}

std::vector<Merge> train(const std::vector<std::string>& chunks, std::int64_t num_merges) {
  std::vector<std::vector<Id>> ids;  // [chunk][token]
  for (const std::string& chunk : chunks) ids.push_back(bytes_to_ids(chunk));
  std::vector<Merge> merges;
  for (std::int64_t i = 0; i < num_merges; ++i) {
    PairCounts counts;  // counted afresh each step, over every chunk in order
    for (const auto& chunk : ids) get_stats(chunk, counts);
    if (counts.first_seen.empty())
      throw std::invalid_argument(fmt::format("BPE train: the text has no pairs left to merge after {} merges", i));
    const Pair pair = most_frequent(counts);
    const Id new_id = 256 + i;
    for (auto& chunk : ids) chunk = merge(chunk, pair, new_id);
    merges.push_back({pair, new_id});
  }
  return merges;
}

MergeTable merge_table(const std::vector<Merge>& merges) {
  MergeTable table;
  for (const Merge& m : merges) table[m.pair] = m.id;
  return table;
}

std::vector<Id> encode(std::vector<Id> ids, const MergeTable& merges) {
  while (ids.size() >= 2) {
    PairCounts counts;
    get_stats(ids, counts);
    // the pair learned first (lowest new id) among those that have a merge
    const Pair* best = nullptr;
    for (const Pair& pair : counts.first_seen)
      if (merges.contains(pair) && (best == nullptr || merges.at(pair) < merges.at(*best))) best = &pair;
    if (best == nullptr) break;  // nothing left to merge
    ids = merge(ids, *best, merges.at(*best));
  }
  return ids;
}

std::vector<std::string> vocab(const std::vector<Merge>& merges) {
  std::vector<std::string> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[b] = std::string(1, static_cast<char>(b));
  for (const Merge& m : merges) {
    bytes.resize(std::max(bytes.size(), static_cast<std::size_t>(m.id) + 1));
    bytes[m.id] = bytes.at(m.pair.first) + bytes.at(m.pair.second);
  }
  return bytes;
}

std::string decode(std::span<const Id> ids, const std::vector<std::string>& vocab) {
  std::string text;
  for (const Id id : ids) {
    if (id < 0 || id >= static_cast<Id>(vocab.size()))
      throw std::invalid_argument(fmt::format("BPE decode: id {} is outside the vocabulary [0, {})", id, vocab.size()));
    text += vocab[id];
  }
  return text;
}

}  // namespace cppgrad::data::bpe_basic
