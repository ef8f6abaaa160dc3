#pragma once
// BPE training, the fast version: the merges bpe_basic::train learns (the same ones, in the same order, the same
// tie-break), with incremental pair counts instead of a recount of the whole text per merge.
//
// The pieces are first counted as distinct words (the KJV's 4.4 MB is 1.05M pieces but 13,849 distinct words); a
// pair's count is the sum over words of (occurrences in the word) x (the word's count), kept in a hash map with,
// for each pair, the words it occurs in. A merge rewrites only those words and adjusts the counts of the pairs they
// lose and gain.
//
// Tie-break (minbpe's): of equally frequent pairs, the one occurring first in the text wins. Words are numbered in
// order of first appearance, so a pair's first occurrence is (the earliest word holding it, the byte offset of its
// left token there). A max-heap ordered by (count descending, first occurrence ascending) finds the next merge in
// O(log n) however many pairs tie. It is lazy, and that is correct because a merge changes priorities in only two
// ways: it removes occurrences of existing pairs (their count drops, their first occurrence can only move later: a
// byte offset, unlike a token index, does not shift when earlier tokens of the word merge), and it creates pairs
// holding the new token, which never existed before and are pushed with their exact priority. So no entry in the
// heap ever ranks below its pair's true priority; the top entry is checked against the truth when popped and pushed
// back corrected if it is stale.
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "data/bpe_ranks.h"

namespace cppgrad::data {

// A text's pieces counted as distinct words, a piece at a time (TextSplitter::for_each_piece gives them), so the
// pieces of a large text never stand in memory all at once: a distinct word is kept once, as a view of its first
// piece, with the number of pieces that are it. The views must stay valid until training has read them.
class BpeWordCounts {
 public:
  void add(std::string_view piece);

  struct Word {
    std::string_view bytes;
    std::int64_t count = 0;  // how many pieces are this word
  };
  // The words in order of first appearance; the index that found them is freed (it is no use to training).
  std::vector<Word> take_words() &&;

 private:
  void grow_index();

  std::vector<Word> words_;
  // The index, word -> its number: a hash table with linear probing, each slot a word's number + 1 (0: empty), at
  // most half full. 4 bytes a slot, against ~56 bytes a word in a std::unordered_map (a node of key, value, hash and
  // link, plus its bucket): a 20 MB text of random bytes has 1.5 million distinct words.
  std::vector<std::uint32_t> index_;
};

// Told (merges done, merges in all) after each merge.
using BpeTrainProgress = std::function<void(std::int64_t done, std::int64_t total)>;

// Learns num_merges merges over the words' bytes (byte b is token b; merge r makes token 256 + r).
// std::invalid_argument if the words run out of pairs first.
std::vector<BpeMerge> train_bpe_merges(BpeWordCounts words, std::int64_t num_merges,
                                       const BpeTrainProgress& progress = {});
// The same over pieces given all at once (tests, small texts).
std::vector<BpeMerge> train_bpe_merges(const std::vector<std::string_view>& pieces, std::int64_t num_merges,
                                       const BpeTrainProgress& progress = {});

}  // namespace cppgrad::data
