#pragma once
// Token ids as text, the format `cppgrad-gpt tokenize encode` prints and `decode` reads, and tiktoken's reference ids
// are committed in (tests/golden/README.md): decimal, one space between two ids, a newline after the last.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cppgrad::data {

// The ids as text: "464 3290 318\n" ("\n" for none).
std::string ids_text(std::span<const std::int64_t> ids);

// The ids of such a text (any whitespace between them). Throws std::invalid_argument naming `source`, the id's
// position (1-based) and its text for anything that is not a whole number in [0, vocab_size): nothing out of the
// vocabulary reaches a decoder.
std::vector<std::int64_t> parse_ids(std::string_view text, std::int64_t vocab_size, const std::string& source);

}  // namespace cppgrad::data
