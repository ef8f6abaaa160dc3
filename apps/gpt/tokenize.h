#pragma once
// `cppgrad-gpt tokenize`: a file's bytes to token ids and back, and a byte-level BPE trained on a file.
//
//   cppgrad-gpt tokenize encode --tokenizer char|gpt2|bpe:FILE --data FILE   the ids on stdout, one space between two
//   cppgrad-gpt tokenize decode --tokenizer gpt2|bpe:FILE --data FILE        such ids back to the bytes, on stdout
//   cppgrad-gpt tokenize lengths --tokenizer char|gpt2|bpe:FILE [--data FILE]  each id's length in bytes, in id order
//   cppgrad-gpt tokenize train  --vocab-size N --data FILE --out FILE [--pattern gpt2|gpt4]
//
// `encode --tokenizer gpt2` prints what tiktoken's gpt2 encoding gives (encode_ordinary; --special also reads
// "<|endoftext|>" as its token), so its output is the reference ids' format (tests/golden/README.md). Any bytes
// encode, invalid UTF-8 included, and decode(encode(x)) == x. `--tokenizer char` numbers the --data file's characters
// as `train --format text` does, so its ids are the ones a character run reads.
#include <string>

#include "data/bpe.h"

namespace cppgrad::gpt {

// The BPE a --tokenizer value names: GPT-2's own ("gpt2") or one that `tokenize train` wrote ("bpe:FILE"), parsed as
// `train --tokenizer` parses it (data::TokenizerName). Anything else, "char" (which encode and lengths read from
// their --data instead), or a file that cannot be read, is a
// train::UsageError naming the value.
data::BpeTokenizer load_tokenizer(const std::string& text);

// The `tokenize` command: argv[0] is "tokenize", argv[1] the subcommand (encode, decode, lengths, train).
int cmd_tokenize(int argc, char** argv);

}  // namespace cppgrad::gpt
