#pragma once
// BPE training, the fast version: the merges bpe_basic::train learns (the same ones, in the same order, the same
// tie-break), with incremental pair counts instead of a recount of the whole text per merge.
//
// The pieces are first counted as distinct words (the KJV's 4.4 MB is 1.05M pieces but 13,849 distinct words); a
// pair's count is the sum over words of (occurrences in the word) x (the word's count), kept in a hash map with,
// for each pair, the words it occurs in. A merge rewrites only those words and adjusts the counts of the pairs they
// lose and gain; a max-heap of (count, pair) with lazily dropped stale entries finds the next most frequent pair.
// Tie-break (minbpe's): of equally frequent pairs, the one occurring first in the text wins. The first occurrence
// of a pair is in the earliest-seen word containing it (words are numbered in order of first appearance), at its
// first position there.
#include <cstdint>
#include <string_view>
#include <vector>

#include "data/bpe_ranks.h"

namespace cppgrad::data {

// Learns num_merges merges over the pieces' bytes (byte b is token b; merge r makes token 256 + r).
// std::invalid_argument if the pieces run out of pairs first.
std::vector<BpeMerge> train_bpe_merges(const std::vector<std::string_view>& pieces, std::int64_t num_merges);

}  // namespace cppgrad::data
