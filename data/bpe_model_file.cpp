// BpeTokenizer's file: minbpe's .model format, written so minbpe's RegexTokenizer.load reads it, and read as
// hostile input (every count is checked against what the file can hold before anything is sized by it).
//
//   minbpe v1                 the format's name and version
//   <split pattern>           one line, as is
//   <n>                       the number of special tokens, then n lines "<text> <id>"
//   <left> <right>            one line per merge, in rank order: merge r makes token 256 + r
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "core/atomic_file.h"
#include "data/bpe.h"
#include "data/utf8.h"

namespace cppgrad::data {

namespace {

bool has_edge_space(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  return !s.empty() && (space(s.front()) || space(s.back()));
}

// The lines of a file, each without its '\n' (and a '\r' before it); no line after a final '\n'.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return lines;
}

// "a b" -> {a, b}: exactly two fields separated by one space.
std::optional<std::pair<std::string_view, std::string_view>> two_fields(std::string_view line) {
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
      line.find(' ', space + 1) != std::string_view::npos)
    return std::nullopt;
  return std::pair{line.substr(0, space), line.substr(space + 1)};
}

// A non-negative decimal integer that is the whole field, written as minbpe writes it: no sign, no leading zero (a
// padded "000...0256" would let a file grow toward the bounds above without saying more).
std::optional<std::int64_t> parse_count(std::string_view field) {
  if (field.size() > 1 && field[0] == '0') return std::nullopt;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::string BpeTokenizer::to_model_text() const {
  if (!ranks_.has_identity_bytes())
    throw std::invalid_argument("BPE save: this tokenizer numbers its byte tokens its own way (GPT-2's does), which "
                                "minbpe's .model format cannot hold; rebuild GPT-2's with BpeTokenizer::gpt2()");
  const std::string& pattern = split_pattern();
  if (pattern.empty() || pattern.size() > kMaxBpeSplitPatternBytes || pattern.find_first_of("\r\n") != std::string::npos ||
      has_edge_space(pattern))
    throw std::invalid_argument(fmt::format("BPE save: the split pattern '{}' must be one line of at most {} bytes "
                                            "without space at either end to fit minbpe's .model format", pattern,
                                            kMaxBpeSplitPatternBytes));
  std::string out = fmt::format("minbpe v1\n{}\n{}\n", pattern, specials_.size());
  for (const SpecialToken& s : specials_) {
    if (s.text.size() > kMaxBpeSpecialTokenBytes)
      throw std::invalid_argument(fmt::format("BPE save: a special token of {} bytes, more than the {} a .model file "
                                              "may hold", s.text.size(), kMaxBpeSpecialTokenBytes));
    if (s.text.find_first_of(" \t\r\n\v\f") != std::string::npos)
      throw std::invalid_argument(fmt::format("BPE save: special token '{}' holds white space, which minbpe's .model "
                                              "format cannot hold", s.text));
    out += fmt::format("{} {}\n", s.text, s.id);
  }
  std::uint64_t total = 256;
  for (std::size_t r = 0; r < ranks_.merges().size(); ++r) {
    const std::size_t bytes = ranks_.bytes(static_cast<std::int64_t>(256 + r)).size();
    if (bytes > kMaxBpeTokenBytes)
      throw std::invalid_argument(fmt::format("BPE save: token {} holds {} bytes, more than the {} a .model file may "
                                              "hold; train on text without such long repeated pieces", 256 + r, bytes,
                                              kMaxBpeTokenBytes));
    total += bytes;
    out += fmt::format("{} {}\n", ranks_.merges()[r].left, ranks_.merges()[r].right);
  }
  if (total > max_bpe_token_bytes_total(out.size()))  // what from_model_text would refuse: refused here, on save
    throw std::invalid_argument(fmt::format("BPE save: the tokens hold {} bytes in all, more than the {} a .model file "
                                            "of {} bytes may make", total, max_bpe_token_bytes_total(out.size()),
                                            out.size()));
  return out;
}

void BpeTokenizer::save(const std::string& path) const { write_file_atomically(path, to_model_text()); }

BpeTokenizer BpeTokenizer::load(const std::string& path) {
  return from_model_text(read_text_file(path, kMaxBpeModelBytes), path);
}

BpeTokenizer BpeTokenizer::from_model_text(std::string_view text, const std::string& name) {
  const auto fail = [&](std::size_t line_index, const std::string& why) {
    return std::runtime_error(fmt::format("{}:{}: {}", name, line_index + 1, why));
  };
  if (text.size() > kMaxBpeModelBytes)
    throw std::runtime_error(fmt::format("{}: {} bytes of BPE model text, more than the {} this program reads", name,
                                         text.size(), kMaxBpeModelBytes));
  // Every line after the first three is a token (a special or a merge): count them before sizing anything by them.
  const auto newlines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
  if (newlines > static_cast<std::uint64_t>(kMaxBpeTokens - 256) + 3)
    throw std::runtime_error(fmt::format("{}: {} lines, more than a BPE of at most {} tokens holds", name, newlines,
                                         kMaxBpeTokens));
  const std::vector<std::string_view> lines = lines_of(text);
  std::size_t at = 0;  // the next line's index (its number is at + 1)
  const auto next_line = [&](const char* what) {
    if (at == lines.size()) throw fail(at, fmt::format("the file ends where {} should be", what));
    return lines[at++];
  };
  if (next_line("the header 'minbpe v1'") != "minbpe v1")
    throw fail(0, "not a minbpe .model file: the first line must be 'minbpe v1'");
  const std::string_view pattern = next_line("the split pattern");
  if (pattern.empty()) throw fail(1, "the split pattern is empty");
  if (pattern.size() > kMaxBpeSplitPatternBytes)  // compiling a regex costs a multiple of its length
    throw fail(1, fmt::format("the split pattern has {} bytes, more than the {} a pattern may have (GPT-4's has 118)",
                              pattern.size(), kMaxBpeSplitPatternBytes));
  const std::string_view count_line = next_line("the number of special tokens");
  const auto count = parse_count(count_line);
  if (!count || static_cast<std::uint64_t>(*count) > lines.size() - at)
    throw fail(2, fmt::format("'{}' is not a number of special tokens the file holds ({} {})", count_line,
                              lines.size() - at, lines.size() - at == 1 ? "line follows" : "lines follow"));
  std::vector<SpecialToken> specials;
  std::unordered_map<std::string_view, std::size_t> special_texts;  // text -> its index in specials
  std::unordered_map<std::int64_t, std::size_t> special_ids;         // id -> its index in specials
  for (std::int64_t i = 0; i < *count; ++i) {
    const auto fields = two_fields(next_line("a special token"));
    const auto id = fields ? parse_count(fields->second) : std::nullopt;
    if (!id) throw fail(at - 1, "expected a special token as '<text> <id>'");
    if (fields->first.size() > kMaxBpeSpecialTokenBytes)  // decode writes it whole for each id
      throw fail(at - 1, fmt::format("a special token of {} bytes, more than the {} one may have", fields->first.size(),
                                     kMaxBpeSpecialTokenBytes));
    const auto text_seen = special_texts.try_emplace(fields->first, specials.size());
    const auto id_seen = special_ids.try_emplace(*id, specials.size());
    if (!text_seen.second || !id_seen.second) {
      const SpecialToken& s = specials[!text_seen.second ? text_seen.first->second : id_seen.first->second];
      throw fail(at - 1, fmt::format("special token '{}' {} repeats the text or id of '{}' {}", fields->first, *id,
                                     s.text, s.id));
    }
    specials.push_back({std::string(fields->first), *id});
  }
  std::vector<BpeMerge> merges;
  merges.reserve(lines.size() - at);
  // Each token's length in bytes as its merge is read: a merge joins two tokens, so n lines can name tokens of
  // 2^n bytes, and a token one byte longer per line makes n^2 / 2 bytes in all. Both are refused here, before
  // BpeRanks builds every token's bytes.
  std::vector<std::uint32_t> length(256, 1);
  length.reserve(256 + merges.capacity());
  const std::uint64_t max_total = max_bpe_token_bytes_total(text.size());
  std::uint64_t total = 256;
  std::unordered_set<std::uint64_t> seen;  // (left << 32 | right) of each merge so far
  while (at < lines.size()) {
    const auto fields = two_fields(lines[at++]);
    const auto left = fields ? parse_count(fields->first) : std::nullopt;
    const auto right = fields ? parse_count(fields->second) : std::nullopt;
    const auto exist = static_cast<std::int64_t>(256 + merges.size());
    if (!left || !right || *left >= exist || *right >= exist)
      throw fail(at - 1, fmt::format("expected a merge '<left> <right>' of two token ids below {}", exist));
    if (!seen.insert((static_cast<std::uint64_t>(*left) << 32) | static_cast<std::uint64_t>(*right)).second)
      throw fail(at - 1, fmt::format("the merge {} {} is already learned above", *left, *right));
    const std::uint64_t bytes = std::uint64_t{length[static_cast<std::size_t>(*left)]} +
                                length[static_cast<std::size_t>(*right)];
    if (bytes > kMaxBpeTokenBytes)
      throw fail(at - 1, fmt::format("the merge {} {} makes a token of {} bytes, more than the {} a token may hold "
                                     "(GPT-2's longest has 128)", *left, *right, bytes, kMaxBpeTokenBytes));
    total += bytes;
    if (total > max_total)
      throw fail(at - 1, fmt::format("the tokens so far hold {} bytes in all, more than the {} a model file of {} "
                                     "bytes may make", total, max_total, text.size()));
    length.push_back(static_cast<std::uint32_t>(bytes));
    merges.push_back({*left, *right});
  }
  const auto merged = static_cast<std::int64_t>(256 + merges.size());
  for (std::size_t i = 0; i < specials.size(); ++i)
    if (specials[i].id < merged || specials[i].id > std::numeric_limits<std::int32_t>::max())
      throw fail(3 + i, fmt::format("special token '{}' has id {}: must be in [{}, 2^31), after the {} byte and merge "
                                    "tokens", specials[i].text, specials[i].id, merged, merged));
  try {
    return BpeTokenizer(BpeRanks(BpeRanks::identity_bytes(), std::move(merges)), pattern, std::move(specials));
  } catch (const std::invalid_argument& e) {  // a pattern that does not compile (the rest is checked above)
    throw fail(1, e.what());
  }
}

}  // namespace cppgrad::data
