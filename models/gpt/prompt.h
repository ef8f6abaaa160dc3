#pragma once
// A typed text's tokens, for every reader of one (cppgrad-gpt's --prompt, the browser page's word and prompt): a BPE
// encodes any text; a character model refuses a character outside its vocabulary, naming it. The ids a model reads
// for it, or continues from, follow its framing (gpt/framing.h) and are checked against its context here, once.
#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace cppgrad::gpt {

// what: how the message names the text ("--prompt"). Throws std::invalid_argument
// "<what> '<text>': the character 'x' (U+...) is not in this model's vocabulary", or naming invalid UTF-8.
std::vector<std::int64_t> prompt_tokens(const data::Tokenizer& tokenizer, const std::string& text,
                                        const std::string& what);

// The ids a model reads for `text`, as its attention maps show them (a line: <b> then the characters). Throws
// std::invalid_argument naming `what` if there are none or more than `context`.
std::vector<std::int64_t> ids_to_read(const data::Tokenizer& tokenizer, const std::string& text, std::int64_t context,
                                      const std::string& what);

// The ids a sample continues from `text` (a line: <b> and the prompt; an empty text starts a line or continues a
// newline). Throws std::invalid_argument naming `what` if a line's prompt leaves no room in the context for the rest
// of the line; a running text is cropped as it goes.
std::vector<std::int64_t> sample_start(const data::Tokenizer& tokenizer, const std::string& text, std::int64_t context,
                                       const std::string& what);

}  // namespace cppgrad::gpt
