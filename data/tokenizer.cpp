#include "data/tokenizer.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "data/utf8.h"

namespace cppgrad::data {

TokenizerName TokenizerName::parse(std::string_view text) {
  if (text == "char") return {};
  if (text == "gpt2") return {.kind = Kind::gpt2, .path = {}};
  if (text.starts_with("bpe:") && text.size() > 4) return {.kind = Kind::bpe_file, .path = std::string(text.substr(4))};
  // A checkpoint's config may hold any text here: the message quotes 100 bytes of it at most.
  const std::string_view shown = text.substr(0, 100);
  throw std::invalid_argument(fmt::format("must be char, gpt2 or bpe:FILE (a .model file), got '{}{}'", shown,
                                          shown.size() < text.size() ? "..." : ""));
}

std::string TokenizerName::text() const {
  switch (kind) {
    case Kind::chars: return "char";
    case Kind::gpt2: return "gpt2";
    case Kind::bpe_file: return "bpe:" + path;
  }
  return "char";
}

namespace {

BpeTokenizer bounded(BpeTokenizer bpe, const std::string& source) {
  if (bpe.size() > kMaxBpeTokens)
    throw std::runtime_error(fmt::format("{}: {} tokens, more than the {} this program reads", source, bpe.size(),
                                         kMaxBpeTokens));
  return bpe;
}

}  // namespace

BpeTokenizer bpe_from_model_text(std::string_view text, const std::string& source) {
  return bounded(BpeTokenizer::from_model_text(text, source), source);
}

BpeTokenizer load_bpe(const TokenizerName& name) {
  switch (name.kind) {
    case TokenizerName::Kind::gpt2: return BpeTokenizer::gpt2();
    case TokenizerName::Kind::bpe_file:
      return bpe_from_model_text(read_text_file(name.path, kMaxBpeModelBytes), name.path);
    case TokenizerName::Kind::chars: break;
  }
  throw std::invalid_argument("load_bpe: --tokenizer char has no BPE (its characters come from the data)");
}

// ------------------------------------------------------------------------------------------- Tokenizer
Tokenizer::Tokenizer(CharTokenizer chars) : impl_(std::move(chars)) {}
Tokenizer::Tokenizer(BpeTokenizer bpe) : impl_(std::make_shared<const BpeTokenizer>(std::move(bpe))) {}

const BpeTokenizer* Tokenizer::bpe() const {
  const auto* p = std::get_if<std::shared_ptr<const BpeTokenizer>>(&impl_);
  return p ? p->get() : nullptr;
}

std::int64_t Tokenizer::size() const { return chars() ? chars()->size() : bpe()->size(); }

std::vector<std::int64_t> Tokenizer::encode(std::string_view text) const {
  if (chars()) return chars()->encode(decode_utf8(text));
  return bpe()->encode_ordinary(text);
}

std::string Tokenizer::decode(std::span<const std::int64_t> ids) const {
  if (bpe()) return bpe()->decode(ids);
  std::string out;
  for (const std::int64_t id : ids) out += chars()->decode(id);
  return out;
}

std::string Tokenizer::token_bytes(std::int64_t id) const {
  return chars() ? chars()->decode(id) : std::string(bpe()->token_bytes(id));
}

std::string Tokenizer::describe() const {
  if (chars()) return fmt::format("char ({} tokens)", size());
  return fmt::format("BPE ({} tokens: {} merges, {} special)", size(), bpe()->num_merges(),
                     bpe()->special_tokens().size());
}

bool Tokenizer::operator==(const Tokenizer& other) const {
  if (chars() || other.chars()) return chars() && other.chars() && chars()->vocab() == other.chars()->vocab();
  const BpeTokenizer &a = *bpe(), &b = *other.bpe();
  return a.ranks().merges() == b.ranks().merges() && a.split_pattern() == b.split_pattern() &&
         a.special_tokens() == b.special_tokens() && a.ranks().byte_ids() == b.ranks().byte_ids();
}

}  // namespace cppgrad::data
