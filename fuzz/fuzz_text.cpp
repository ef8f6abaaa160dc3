// libFuzzer harness: any bytes as a text data file (`cppgrad-gpt train --data FILE`). The first byte picks the
// configuration (context, seed), the rest is the file's content, read as both formats, lines and text. Refusals are
// std::invalid_argument naming the problem (invalid UTF-8 and its offset, a line too long, too little data); anything
// else is a finding. Promises checked beyond not crashing:
//   - decode_utf8 accepts exactly what encode_utf8 gives back byte for byte, and make_text_corpus refuses what it
//     refuses, with the same message;
//   - an accepted corpus is consistent: ids inside the vocab, lines of at most T - 1 characters, every split able to
//     make a batch, the vocab surviving its JSON, the checkpoint-tokenizer path giving the same split, a finite
//     bigram loss.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "data/bigram.h"
#include "data/text_corpus.h"
#include "data/utf8.h"
#include "fuzz_util.h"

using cppgrad::fuzz::bug;
namespace data = cppgrad::data;

namespace {

void check_ids(const std::vector<std::int64_t>& ids, const data::CharTokenizer& tok, std::int64_t first, const char* what) {
  for (const std::int64_t id : ids)
    if (id < first || id >= tok.size()) bug(std::string(what) + ": an id outside the vocabulary");
}

void check_splits(const data::Lines& s, const data::CharTokenizer& tok, std::int64_t T) {
  if (!tok.has_boundary() || s.train.empty() || s.val.empty()) bug("lines mode: no boundary or an empty split");
  for (const auto* split : {&s.train, &s.val}) {
    std::vector<std::int64_t> rows;
    for (std::size_t i = 0; i < split->size(); ++i) {
      check_ids((*split)[i], tok, 1, "lines mode");
      if (static_cast<std::int64_t>((*split)[i].size()) > T - 1) bug("lines mode: a line longer than context - 1");
      rows.push_back(static_cast<std::int64_t>(i));
    }
    (void)data::lines_batch(*split, rows, T);
  }
}

void check_splits(const data::RunningText& s, const data::CharTokenizer& tok, std::int64_t T) {
  if (tok.has_boundary()) bug("text mode: a boundary token");
  for (const auto* split : {&s.train, &s.val}) {
    check_ids(*split, tok, 0, "text mode");
    if (static_cast<std::int64_t>(split->size()) <= T) bug("text mode: a split without a window");
    (void)data::text_batch(*split, data::eval_window_starts(static_cast<std::int64_t>(split->size()), T), T);
  }
}

bool same_splits(const data::Lines& a, const data::Lines& b) { return a.train == b.train && a.val == b.val; }
bool same_splits(const data::RunningText& a, const data::RunningText& b) { return a.train == b.train && a.val == b.val; }

void check_corpus(std::string_view text, const data::TextCorpusConfig& config, const data::TextCorpus& c) {
  if (c.tokenizer.chars() == nullptr) bug("a corpus made without a tokenizer holds no character tokenizer");
  const data::CharTokenizer& tok = *c.tokenizer.chars();
  if (data::CharTokenizer::from_vocab_json(tok.vocab_json()).vocab() != tok.vocab()) bug("vocab_json does not round-trip");
  const auto again = data::make_text_corpus(text, config, c.tokenizer);  // a checkpoint's tokenizer: the same split
  const bool same = again.splits.index() == c.splits.index() && again.context == c.context &&
                    std::visit([&](const auto& s) { return same_splits(s, std::get<std::decay_t<decltype(s)>>(again.splits)); },
                               c.splits);
  if (!same) bug("the corpus made with its own tokenizer differs from the corpus");
  std::visit([&](const auto& s) { check_splits(s, tok, c.context); }, c.splits);
  if (!std::isfinite(data::bigram_val_loss(c))) bug("a bigram loss that is not finite");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t knob = bytes[0];
  const std::string_view text(reinterpret_cast<const char*>(bytes) + 1, size - 1);

  std::string utf8_refusal;
  try {
    if (data::encode_utf8(data::decode_utf8(text)) != text) bug("decode_utf8 then encode_utf8 changed the bytes");
  } catch (const std::invalid_argument& e) {
    utf8_refusal = e.what();
  }

  for (const auto format : {data::TextFormat::lines, data::TextFormat::text}) {
    data::TextCorpusConfig config;
    config.format = format;
    // Lines: 0 (the longest line + 1) or 1..7; text: 1..8. Small, so that short inputs still make corpora.
    config.context = format == data::TextFormat::lines ? knob % 8 : 1 + knob % 8;
    config.val_fraction = 0.25;
    config.seed = knob >> 3;
    try {
      check_corpus(text, config, data::make_text_corpus(text, config));
      if (!utf8_refusal.empty()) bug("make_text_corpus accepted what decode_utf8 refused");
    } catch (const std::invalid_argument& e) {
      if (!utf8_refusal.empty() && utf8_refusal != e.what())
        bug("make_text_corpus refused invalid UTF-8 with another message: " + std::string(e.what()));
    }
  }
  return 0;
}
