#pragma once
// Byte-pair encoding, the readable version: minbpe's base.py + basic.py in C++ (read bpe_basic.cpp top to bottom).
//
// Tokens are ids: 0..255 are the bytes (or, given byte_ids, any fixed numbering of them); each merge joins a pair of
// adjacent tokens into a new token whose id is the next free one (256, 257, ...). Training learns the merges, most
// frequent pair first; encoding replays them, earliest learned first; decoding concatenates bytes.
//
//   auto merges = bpe_basic::train({"aaabdaaabac"}, 3);        // (97,97)->256, (256,97)->257, (257,98)->258
//   bpe_basic::encode(bpe_basic::bytes_to_ids("aaabdaaabac"), merge_table(merges))  // {258, 100, 258, 97, 99}
//
// The fast versions (BpeRanks::encode_piece, train_bpe_merges) give the same answers; tests hold them equal.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cppgrad::data::bpe_basic {

using Id = std::int64_t;
using Pair = std::pair<Id, Id>;

// One learned merge: pair -> id (the new token).
struct Merge {
  Pair pair;
  Id id;
  bool operator==(const Merge&) const = default;
};

// How often each adjacent pair occurs, and the order the pairs were first seen in (as Python's dict keeps it).
struct PairCounts {
  std::map<Pair, std::int64_t> count;
  std::vector<Pair> first_seen;
};

// Adds the adjacent pairs of ids to counts: {1, 2, 3, 1, 2} adds (1,2) twice, (2,3) once, (3,1) once.
void get_stats(std::span<const Id> ids, PairCounts& counts);

// The pair seen first among the most frequent: minbpe's max(stats, key=stats.get) (the tie-break).
Pair most_frequent(const PairCounts& counts);

// Replaces each occurrence of pair in ids, left to right, by new_id: ({1, 1, 1}, (1,1), 4) -> {4, 1}.
std::vector<Id> merge(std::span<const Id> ids, Pair pair, Id new_id);

// The bytes of text as ids 0..255 (byte b -> b).
std::vector<Id> bytes_to_ids(std::string_view text);

// Learns num_merges merges from chunks (the text cut into pieces; pairs never cross a chunk's edge). The first merge
// makes id 256. std::invalid_argument if the chunks run out of pairs first.
std::vector<Merge> train(const std::vector<std::string>& chunks, std::int64_t num_merges);

// The merges as a lookup table, pair -> new id (minbpe's self.merges).
using MergeTable = std::map<Pair, Id>;
MergeTable merge_table(const std::vector<Merge>& merges);

// Applies the merges to ids: while some adjacent pair has a merge, join the one learned first (lowest new id).
std::vector<Id> encode(std::vector<Id> ids, const MergeTable& merges);

// Each token's bytes: vocab[b] = the byte b, vocab[id] = vocab[left] + vocab[right].
std::vector<std::string> vocab(const std::vector<Merge>& merges);

// The ids' bytes, concatenated. std::invalid_argument for an id outside the vocab.
std::string decode(std::span<const Id> ids, const std::vector<std::string>& vocab);

}  // namespace cppgrad::data::bpe_basic
