#pragma once
// A prompt's tokens, for every reader of a typed text (cppgrad-gpt's --prompt, the browser page's word): a BPE
// encodes any text; a character model refuses a character outside its vocabulary, naming it.
#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace cppgrad::gpt {

// what: how the message names the text ("--prompt"). Throws std::invalid_argument
// "<what> '<text>': the character 'x' (U+...) is not in this model's vocabulary", or naming invalid UTF-8.
std::vector<std::int64_t> prompt_tokens(const data::Tokenizer& tokenizer, const std::string& text,
                                        const std::string& what);

}  // namespace cppgrad::gpt
