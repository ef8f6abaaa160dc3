#pragma once
// A text file made ready for a next-character model: tokenized, split into training and validation, sized.
//
// Two shapes of data, two types:
//   Lines        (makemore's names, a word list): each non-empty line is one sequence <b> c1 .. cn <b>; lines are
//                shuffled with a seeded Generator (a word list is sorted) and the first round(N * val_fraction) (at
//                least 1, at most N - 1) are validation, the rest training, like words_pytorch.py; the context T
//                defaults to the longest line + 1 (the model reads <b> and the characters);
//   RunningText  (tiny-shakespeare): the whole text is one token stream, no boundary token; the last
//                round(N * val_fraction) tokens validate, the ones before train (nanoGPT's split); windows of T.
// A TextCorpus holds one of them. What differs between them (how a batch is cut, which rows it draws from, the
// targets its loss counts, the bigram baseline) is an overload per type (data/corpus_rows.h, data/bigram.h), so a
// trainer visits the corpus once per call and never asks which it holds.
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "data/token_batch.h"
#include "data/tokenizer.h"

namespace cppgrad::data {

enum class TextFormat { lines, text };
std::optional<TextFormat> parse_text_format(std::string_view name);  // "lines" / "text"; nullopt otherwise
const char* to_string(TextFormat format);

struct TextCorpusConfig {
  TextFormat format = TextFormat::lines;
  std::int64_t context = 0;   // T. 0: lines mode -> longest line + 1; text mode -> an error (it must be given)
  double val_fraction = 0.1;  // (0, 1): share of lines (lines mode) / of tokens at the end (text mode) held out
  std::uint64_t seed = 0;     // lines mode: the shuffle before the split
};

// Each line's ids, no boundaries; the tokenizer's id 0 is the boundary <b>.
struct Lines {
  std::vector<std::vector<std::int64_t>> train, val;
  std::int64_t longest_line = 0;  // characters of the longest line
};

// The two streams of a running text; the tokenizer has no boundary.
struct RunningText {
  std::vector<std::int64_t> train, val;
};

struct TextCorpus {
  Tokenizer tokenizer;  // characters (lines or text), or a BPE (text only)
  std::int64_t context = 0;  // T: the model's block size
  std::variant<Lines, RunningText> splits;
};

// The corpus of UTF-8 text (decode_utf8's error for invalid bytes). std::invalid_argument for: fewer than 2
// non-empty lines (lines mode); a line over T - 1 characters, "line L has C characters; --context N holds at most
// N-1 (...)" with L its 1-based line number in the file; a split (text mode) of no more than T tokens, saying how
// many it has and needs; a config out of range.
TextCorpus make_text_corpus(std::string_view utf8, const TextCorpusConfig& config);

// The same split with a tokenizer fixed beforehand (a checkpoint's, for `eval --data FILE`; a BPE, for training): a
// character outside a character vocab is an error naming it and its line. A BPE reads any bytes, in text mode only
// (std::invalid_argument for lines mode: the framing's <b> is a character tokenizer's). Here val_fraction may be 0,
// meaning "all of it is validation" (every line / token goes to val, and one line / T + 1 tokens are enough).
TextCorpus make_text_corpus(std::string_view utf8, const TextCorpusConfig& config, const Tokenizer& tokenizer);

}  // namespace cppgrad::data
