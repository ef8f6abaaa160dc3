#pragma once
// The merge table of a byte-level BPE tokenizer, and the fast kernel that applies it to one piece of text.
//
// Ids: byte b is token byte_id(b) (0..255: b itself for a trained tokenizer, GPT-2's own order for GPT-2's); merge r
// (r = 0, 1, ...: its rank, the order it was learned in) joins tokens (left, right) into token 256 + r. So a lower
// id was learned earlier, and BPE applies the lowest-ranked pair present first.
//
// encode_piece is tiktoken's byte_pair_encode shape: start from the piece's byte tokens, find the adjacent pair of
// lowest rank (the leftmost of equals), join it, repeat. bpe_basic::encode (minbpe's loop) is the readable twin: it
// joins every occurrence of the lowest pair in one pass, which gives the same ids because a join only creates pairs
// of higher rank than its own.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cppgrad::data {

struct BpeMerge {
  std::int64_t left, right;  // the pair of tokens joined
  bool operator==(const BpeMerge&) const = default;
};

class BpeRanks {
 public:
  using ByteIds = std::array<std::int64_t, 256>;
  static ByteIds identity_bytes();  // byte b is token b

  BpeRanks() : BpeRanks(identity_bytes(), {}) {}
  // byte_ids must be a permutation of 0..255; merge r may join only tokens that exist before it (ids < 256 + r).
  // std::invalid_argument naming the first bad entry.
  BpeRanks(const ByteIds& byte_ids, std::vector<BpeMerge> merges);

  std::int64_t size() const { return 256 + static_cast<std::int64_t>(merges_.size()); }  // byte and merge tokens
  const ByteIds& byte_ids() const { return byte_ids_; }
  bool has_identity_bytes() const { return byte_ids_ == identity_bytes(); }
  const std::vector<BpeMerge>& merges() const { return merges_; }
  std::optional<std::int64_t> rank(std::int64_t left, std::int64_t right) const;  // nullopt: no such merge
  std::string_view bytes(std::int64_t id) const { return vocab_[static_cast<std::size_t>(id)]; }  // id < size()

  // Appends the ids of one piece's bytes, fully merged, to out.
  void encode_piece(std::string_view piece, std::vector<std::int64_t>& out) const;

 private:
  static constexpr std::int32_t kNoRank = std::numeric_limits<std::int32_t>::max();
  std::int32_t pair_rank(std::int32_t left, std::int32_t right) const;  // kNoRank if no merge
  void encode_short(std::string_view piece, std::vector<std::int64_t>& out) const;
  void encode_long(std::string_view piece, std::vector<std::int64_t>& out) const;

  ByteIds byte_ids_;
  std::vector<BpeMerge> merges_;                        // [rank]
  std::unordered_map<std::uint64_t, std::int32_t> rank_;  // (left << 32 | right) -> rank
  std::vector<std::string> vocab_;                      // [size()] each token's bytes
};

}  // namespace cppgrad::data
