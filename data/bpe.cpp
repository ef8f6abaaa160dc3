#include "data/bpe.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "data/bpe_train.h"
#include "data/gpt2_vocab.h"

namespace cppgrad::data {

// GPT-2's encoder.py pattern, as tiktoken's "gpt2" (r50k) encoding and npm's tiktoken give it.
const std::string_view kGpt2SplitPattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// tiktoken's "cl100k_base" (GPT-4) pattern, as npm's tiktoken gives it.
const std::string_view kGpt4SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

BpeTokenizer::BpeTokenizer(BpeRanks ranks, std::string_view split_pattern, std::vector<SpecialToken> special_tokens)
    : ranks_(std::move(ranks)), splitter_(split_pattern), specials_(std::move(special_tokens)) {
  size_ = ranks_.size();
  for (std::size_t i = 0; i < specials_.size(); ++i) {
    const SpecialToken& s = specials_[i];
    if (s.text.empty()) throw std::invalid_argument(fmt::format("BPE special token {} (id {}) has no text", i, s.id));
    if (s.id < ranks_.size() || s.id > std::numeric_limits<std::int32_t>::max())
      throw std::invalid_argument(fmt::format("BPE special token '{}' has id {}: must be in [{}, 2^31), after the byte "
                                              "and merge tokens", s.text, s.id, ranks_.size()));
    // Each text and id to the first special that has it: linear in their number, not quadratic.
    const auto text_seen = special_ids_.try_emplace(s.text, s.id);
    const auto id_seen = special_index_.try_emplace(s.id, i);
    if (!text_seen.second || !id_seen.second) {
      const SpecialToken& first =
          specials_[!id_seen.second ? id_seen.first->second : special_index_.at(text_seen.first->second)];
      throw std::invalid_argument(fmt::format("BPE special tokens '{}' (id {}) and '{}' (id {}) share a text or an id",
                                              first.text, first.id, s.text, s.id));
    }
    size_ = std::max(size_, s.id + 1);
  }
}

BpeTokenizer BpeTokenizer::gpt2() {
  const Gpt2Files files = find_gpt2_files();
  return gpt2(files.encoder_json, files.vocab_bpe);
}

BpeTokenizer BpeTokenizer::gpt2(const std::string& encoder_json_path, const std::string& vocab_bpe_path) {
  Gpt2Vocab vocab = read_gpt2_vocab(encoder_json_path, vocab_bpe_path);
  std::vector<SpecialToken> specials;
  for (auto& [text, id] : vocab.specials) specials.push_back({std::move(text), id});
  return BpeTokenizer(std::move(vocab.ranks), kGpt2SplitPattern, std::move(specials));
}

BpeTokenizer BpeTokenizer::train(std::string_view text, std::int64_t vocab_size, std::string_view split_pattern,
                                 const std::vector<std::string>& special_tokens, const BpeTrainProgress& progress) {
  if (vocab_size < 256 || vocab_size > std::numeric_limits<std::int32_t>::max() / 2)
    throw std::invalid_argument(fmt::format("BPE train: vocab_size {} must be at least 256 (the byte tokens) and "
                                            "below 2^30", vocab_size));
  // The pieces are counted as they are cut, never all held at once (20 MB of random bytes is 12.4M pieces, 1.5M
  // distinct).
  BpeWordCounts words;
  TextSplitter(split_pattern).for_each_piece(text, [&words](std::string_view piece) { words.add(piece); });
  std::vector<BpeMerge> merges;
  try {
    merges = train_bpe_merges(std::move(words), vocab_size - 256, progress);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: vocab_size {} needs {} merges; use a smaller vocab_size or more text",
                                            e.what(), vocab_size, vocab_size - 256));
  }
  std::vector<SpecialToken> specials;
  for (const std::string& s : special_tokens)
    specials.push_back({s, vocab_size + static_cast<std::int64_t>(specials.size())});
  return BpeTokenizer(BpeRanks(BpeRanks::identity_bytes(), std::move(merges)), split_pattern, std::move(specials));
}

std::vector<std::int64_t> BpeTokenizer::encode_ordinary(std::string_view text) const {
  std::vector<std::int64_t> out;
  out.reserve(text.size() / 4 + 16);
  // The cache: each distinct piece is merged once per call (in English most pieces are repeats); its ids are kept
  // in `cached`, at [first, first + count).
  std::unordered_map<std::string_view, std::pair<std::size_t, std::size_t>> cache;
  std::vector<std::int64_t> cached;
  splitter_.for_each_piece(text, [&](std::string_view piece) {
    if (piece.size() == 1) {
      out.push_back(ranks_.byte_ids()[static_cast<unsigned char>(piece[0])]);
      return;
    }
    auto [it, added] = cache.try_emplace(piece);
    if (added) {
      const std::size_t first = cached.size();
      ranks_.encode_piece(piece, cached);
      it->second = {first, cached.size() - first};
    }
    const auto begin = cached.begin() + static_cast<std::ptrdiff_t>(it->second.first);
    out.insert(out.end(), begin, begin + static_cast<std::ptrdiff_t>(it->second.second));
  });
  return out;
}

std::vector<std::int64_t> BpeTokenizer::encode(std::string_view text) const {
  constexpr std::size_t kNone = std::string_view::npos;
  std::vector<std::size_t> next(specials_.size());  // [special] its next occurrence at or after `from`, or kNone
  for (std::size_t i = 0; i < specials_.size(); ++i) next[i] = text.find(specials_[i].text);
  std::vector<std::int64_t> out;
  for (std::size_t from = 0;;) {
    // the earliest special token ahead (the longest of those starting there)
    const SpecialToken* found = nullptr;
    std::size_t at = kNone;
    for (std::size_t i = 0; i < specials_.size(); ++i)
      if (next[i] < at || (next[i] == at && at != kNone && specials_[i].text.size() > found->text.size()))
        at = next[i], found = &specials_[i];
    const std::vector<std::int64_t> ordinary = encode_ordinary(text.substr(from, at == kNone ? kNone : at - from));
    out.insert(out.end(), ordinary.begin(), ordinary.end());
    if (found == nullptr) return out;
    out.push_back(found->id);
    from = at + found->text.size();
    for (std::size_t i = 0; i < specials_.size(); ++i)
      if (next[i] != kNone && next[i] < from) next[i] = text.find(specials_[i].text, from);
  }
}

std::string_view BpeTokenizer::token_bytes(std::int64_t id) const {
  if (id >= 0 && id < ranks_.size()) return ranks_.bytes(id);
  if (const auto it = special_index_.find(id); it != special_index_.end()) return specials_[it->second].text;
  if (id < 0 || id >= size())
    throw std::invalid_argument(fmt::format("BPE: id {} is outside the vocabulary [0, {})", id, size()));
  throw std::invalid_argument(fmt::format("BPE: id {} is no token (no merge or special token has it)", id));
}

std::string BpeTokenizer::decode(std::span<const std::int64_t> ids) const {
  std::string text;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::int64_t id = ids[i];
    if (id >= 0 && id < ranks_.size()) {
      text += ranks_.bytes(id);
      continue;
    }
    try {
      text += token_bytes(id);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("decode: {} (at index {})", e.what(), i));
    }
  }
  return text;
}

std::int64_t BpeTokenizer::size() const { return size_; }

std::optional<std::int64_t> BpeTokenizer::special_id(std::string_view text) const {
  const auto it = special_ids_.find(std::string(text));
  if (it == special_ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace cppgrad::data
