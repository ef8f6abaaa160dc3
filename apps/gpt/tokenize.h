#pragma once
// `cppgrad-gpt tokenize`: a file's bytes to token ids and back, and a byte-level BPE trained on a file.
//
//   cppgrad-gpt tokenize encode --tokenizer gpt2|bpe:FILE --data FILE   the ids on stdout, one space between two
//   cppgrad-gpt tokenize decode --tokenizer gpt2|bpe:FILE --data FILE   such ids back to the bytes, on stdout
//   cppgrad-gpt tokenize train  --vocab-size N --data FILE --out FILE [--pattern gpt2|gpt4]
//
// `encode --tokenizer gpt2` prints what tiktoken's gpt2 encoding gives (encode_ordinary; --special also reads
// "<|endoftext|>" as its token), so its output is the reference ids' format (tests/golden/README.md). Any bytes
// encode, invalid UTF-8 included, and decode(encode(x)) == x.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe.h"

namespace cppgrad::gpt {

// A --tokenizer value: GPT-2's own ("gpt2") or a BPE that `tokenize train` wrote ("bpe:FILE").
struct TokenizerSpec {
  enum class Kind { Gpt2, BpeFile };
  Kind kind = Kind::Gpt2;
  std::string path;  // the .model file of a BpeFile
};

// Throws train::UsageError naming the text for anything else.
TokenizerSpec parse_tokenizer_spec(const std::string& text);

// The tokenizer a spec names, read from its files; a missing or unreadable file is a usage error naming the spec.
data::BpeTokenizer load_tokenizer(const TokenizerSpec& spec);

// The ids as text: decimal, one space between two, a newline after the last ("\n" for none).
std::string ids_text(std::span<const std::int64_t> ids);

// The ids of such a text (any whitespace between them); throws std::invalid_argument naming `source`, the id's
// position (1-based) and its text for anything that is not a whole number in [0, vocab_size).
std::vector<std::int64_t> parse_ids(std::string_view text, std::int64_t vocab_size, const std::string& source);

// The `tokenize` command: argv[0] is "tokenize", argv[1] the subcommand (encode, decode, train).
int cmd_tokenize(int argc, char** argv);

}  // namespace cppgrad::gpt
