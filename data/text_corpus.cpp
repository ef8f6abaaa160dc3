#include "data/text_corpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/generator.h"
#include "core/message_text.h"
#include "data/utf8.h"

namespace cppgrad::data {

std::optional<TextFormat> parse_text_format(std::string_view name) {
  if (name == "lines") return TextFormat::lines;
  if (name == "text") return TextFormat::text;
  return std::nullopt;
}

const char* to_string(TextFormat format) { return format == TextFormat::lines ? "lines" : "text"; }

namespace {

struct Line {
  std::int64_t number;          // 1-based, counting every line of the file (empty ones too)
  std::u32string_view text;     // without '\n' and a trailing '\r'
};

// Splits on '\n', drops a trailing '\r' (CRLF files), skips the lines left empty.
std::vector<Line> split_lines(std::u32string_view text) {
  std::vector<Line> lines;
  std::int64_t number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find(U'\n', begin), text.size());
    std::u32string_view line = text.substr(begin, end - begin);
    ++number;
    if (!line.empty() && line.back() == U'\r') line.remove_suffix(1);
    if (!line.empty()) lines.push_back({number, line});
    begin = end + 1;
  }
  return lines;
}

// A character as a message shows it: a NUL, a newline or a control escaped (core/message_text.h), so the line stays one
// and whole.
std::string describe(char32_t c) {
  return fmt::format("'{}' ({})", escape_controls(encode_utf8(c)), code_point_name(c));
}

// The ids of `text`, or an error naming the first character the tokenizer lacks and its line (first_line is the
// line number of text[0]; '\n' inside text advances it).
std::vector<std::int64_t> encode_or_name_line(const CharTokenizer& tok, std::u32string_view text, std::int64_t first_line) {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  std::int64_t line = first_line;
  for (const char32_t c : text) {
    const auto id = tok.find(c);
    if (!id)
      throw std::invalid_argument(fmt::format("line {}: character {} is not in the tokenizer's vocabulary", line, describe(c)));
    ids.push_back(*id);
    if (c == U'\n') ++line;
  }
  return ids;
}

void check_config(const TextCorpusConfig& c, bool fixed_tokenizer) {
  const bool zero_ok = fixed_tokenizer && c.val_fraction == 0.0;
  if (!(c.val_fraction > 0.0 && c.val_fraction < 1.0) && !zero_ok)
    throw std::invalid_argument(fmt::format("val_fraction must be in (0, 1){}, got {}",
                                            fixed_tokenizer ? " or 0 (all validation)" : "", c.val_fraction));
  // 2^40 keeps every sum and product of positions far from overflow; a real context is thousands at most.
  if (c.context < 0 || c.context > (std::int64_t{1} << 40))
    throw std::invalid_argument(fmt::format("context must be in [0, 2^40] (0 = {}), got {}",
                                            c.format == TextFormat::lines ? "the longest line + 1" : "none: required",
                                            c.context));
  if (c.format == TextFormat::text && c.context == 0)
    throw std::invalid_argument("text mode needs a context (the window length), got 0");
}

TextCorpus make_lines(std::u32string_view text, const TextCorpusConfig& c, const CharTokenizer* fixed) {
  const std::vector<Line> lines = split_lines(text);
  const std::int64_t N = static_cast<std::int64_t>(lines.size());
  const bool all_val = c.val_fraction == 0.0;
  if (N < (all_val ? 1 : 2))
    throw std::invalid_argument(fmt::format("lines mode needs at least {} non-empty line{}, the file has {}",
                                            all_val ? 1 : 2, all_val ? "" : "s (one to train on, one to validate)", N));
  TextCorpus corpus;
  Lines& split = corpus.splits.emplace<Lines>();
  CharTokenizer tokenizer;
  if (fixed) {
    if (!fixed->has_boundary())
      throw std::invalid_argument("lines mode needs a tokenizer whose id 0 is the boundary <b>");
    tokenizer = *fixed;
  } else {
    std::u32string chars;  // every character of every line: the vocabulary
    for (const Line& l : lines) chars += l.text;
    tokenizer = CharTokenizer::from_text(chars, /*with_boundary=*/true);
  }
  for (const Line& l : lines) split.longest_line = std::max(split.longest_line, static_cast<std::int64_t>(l.text.size()));
  corpus.context = c.context == 0 ? split.longest_line + 1 : c.context;
  for (const Line& l : lines)  // in file order, so the first line too long is the one named
    if (static_cast<std::int64_t>(l.text.size()) > corpus.context - 1)
      throw std::invalid_argument(fmt::format(
          "line {} has {} characters; --context {} holds at most {} (the model reads <b> and the characters)",
          l.number, l.text.size(), corpus.context, corpus.context - 1));

  std::vector<std::vector<std::int64_t>> encoded;
  encoded.reserve(lines.size());
  for (const Line& l : lines) encoded.push_back(encode_or_name_line(tokenizer, l.text, l.number));
  corpus.tokenizer = Tokenizer(std::move(tokenizer));
  // Fisher-Yates with the seeded Generator, then validation first (words_pytorch.py: words[:n_val]).
  Generator gen(c.seed);
  for (std::int64_t i = N - 1; i > 0; --i) std::swap(encoded[i], encoded[gen.randint(0, i + 1)]);
  const std::int64_t n_val =
      all_val ? N : std::clamp<std::int64_t>(std::llround(static_cast<double>(N) * c.val_fraction), 1, N - 1);
  split.val.assign(std::make_move_iterator(encoded.begin()), std::make_move_iterator(encoded.begin() + n_val));
  split.train.assign(std::make_move_iterator(encoded.begin() + n_val), std::make_move_iterator(encoded.end()));
  return corpus;
}

// The ids of a running text split at the end: the last round(N * val_fraction) validate.
RunningText split_stream(std::vector<std::int64_t> ids, const TextCorpusConfig& c) {
  RunningText split;
  const std::int64_t N = static_cast<std::int64_t>(ids.size()), T = c.context;
  // round(N * val_fraction) held out, as in lines mode: rounded, so no floating-point error in the product can move
  // the split by a token (nanoGPT floors n * 0.9 for its training part).
  const std::int64_t n_train =
      c.val_fraction == 0.0 ? 0 : N - std::llround(static_cast<double>(N) * c.val_fraction);
  // A split is usable when it holds one window and its next token: more than T tokens.
  const auto check = [&](const char* name, std::int64_t have) {
    if (have <= T)
      throw std::invalid_argument(fmt::format(
          "the {} split has {} of the {} tokens (val_fraction {}); context {} needs at least {}",
          name, have, N, c.val_fraction, T, T + 1));
  };
  if (c.val_fraction != 0.0) check("training", n_train);
  check("validation", N - n_train);
  split.val.assign(ids.begin() + n_train, ids.end());
  ids.resize(static_cast<std::size_t>(n_train));
  split.train = std::move(ids);  // moved, not copied: the stream may be a gigabyte of text
  return split;
}

TextCorpus make_text(std::u32string_view text, const TextCorpusConfig& c, const CharTokenizer* fixed) {
  if (fixed && fixed->has_boundary())
    throw std::invalid_argument("text mode needs a tokenizer without the boundary <b>");
  CharTokenizer chars = fixed ? *fixed : CharTokenizer::from_text(text, /*with_boundary=*/false);
  std::vector<std::int64_t> ids = encode_or_name_line(chars, text, 1);
  return {.tokenizer = Tokenizer(std::move(chars)), .context = c.context, .splits = split_stream(std::move(ids), c)};
}

// A BPE reads the bytes as they are (any bytes: it needs no UTF-8), and only as a running text: lines mode frames
// each line with the character tokenizer's <b>, id 0, which a BPE does not have.
TextCorpus make_bpe_text(std::string_view bytes, const TextCorpusConfig& c, const Tokenizer& bpe) {
  if (c.format == TextFormat::lines)
    throw std::invalid_argument("lines mode frames each line with the character tokenizer's <b>; a "
                                "BPE tokenizer reads a running text (--format text)");
  return {.tokenizer = bpe, .context = c.context, .splits = split_stream(bpe.encode(bytes), c)};
}

TextCorpus make(std::string_view utf8, const TextCorpusConfig& c, const Tokenizer* fixed) {
  check_config(c, fixed != nullptr);
  if (fixed && fixed->bpe()) return make_bpe_text(utf8, c, *fixed);
  const std::u32string text = decode_utf8(utf8);
  const CharTokenizer* chars = fixed ? fixed->chars() : nullptr;
  return c.format == TextFormat::lines ? make_lines(text, c, chars) : make_text(text, c, chars);
}

}  // namespace

TextCorpus make_text_corpus(std::string_view utf8, const TextCorpusConfig& config) { return make(utf8, config, nullptr); }

TextCorpus make_text_corpus(std::string_view utf8, const TextCorpusConfig& config, const Tokenizer& tokenizer) {
  return make(utf8, config, &tokenizer);
}

}  // namespace cppgrad::data
