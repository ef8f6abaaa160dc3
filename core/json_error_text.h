#pragma once
// nlohmann::json's exception text as a reader's message says it: without its "[json.exception.parse_error.101] " tag,
// which means nothing to a user. For the readers that parse JSON from a file (core/safetensors_header.cpp,
// data/char_tokenizer.cpp).
#include <string>

namespace cppgrad {

inline std::string json_error_text(const std::string& what) {
  const std::size_t close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos ? what.substr(close + 2) : what;
}

}  // namespace cppgrad
