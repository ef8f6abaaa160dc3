// TextSplitter in a build without PCRE2 (the WebAssembly build, docs/browser.md, which has no wasm PCRE2 to link):
// the regex split, and so the byte-level BPE tokenizer built on it, refuses to start with a message that says why.
// Everything else of data/ (the character tokenizer, the corpora, the batches) works as in the native build.
#include <stdexcept>
#include <string>

#include "data/text_split.h"

namespace cppgrad::data {

namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error("the regex split of BPE tokenizers needs PCRE2, which this build (WebAssembly) does not "
                           "have: use the character tokenizer, or the native build");
}
}  // namespace

TextSplitter::TextSplitter(std::string_view pattern) : pattern_(pattern) { unavailable(); }

void TextSplitter::for_each_piece(std::string_view, const std::function<void(std::string_view)>&) const {
  unavailable();
}

std::vector<std::string_view> TextSplitter::pieces(std::string_view) const { unavailable(); }

}  // namespace cppgrad::data
