// libFuzzer harness: any bytes, read as a BPE tokenizer's .model file (minbpe's format: BpeTokenizer::load's
// parser). A refusal (std::runtime_error "fuzz:<line>: <why>") is the expected answer to a bad file; anything else
// (a crash, a sanitizer report, another exception, a hang, a huge allocation) is a bug. Promises beyond not crashing,
// for what the reader accepts:
//   - written again (when minbpe's format can hold it), it reads back to the same text;
//   - any bytes round-trip through encode and decode (a short sample: the file's first 64 bytes, invalid UTF-8
//     included), unless the file's own split pattern gives up (PCRE2's match limit: std::runtime_error).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "data/bpe.h"
#include "fuzz_util.h"

using cppgrad::fuzz::bug;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::optional<cppgrad::data::BpeTokenizer> tok;
  try {
    tok = cppgrad::data::BpeTokenizer::from_model_text(bytes, "fuzz");
  } catch (const std::runtime_error& e) {
    if (!std::string_view(e.what()).starts_with("fuzz:")) bug(std::string("a refusal not naming the file: ") + e.what());
    return 0;
  }
  std::string written;
  try {
    written = tok->to_model_text();
  } catch (const std::invalid_argument&) {  // a pattern with space at an end, say: minbpe's format cannot hold it
  }
  if (!written.empty() && cppgrad::data::BpeTokenizer::from_model_text(written, "again").to_model_text() != written)
    bug("a .model text written and read back changed");
  const std::string sample(bytes.substr(0, 64));
  try {
    if (tok->decode(tok->encode(sample)) != sample) bug("decode(encode(x)) != x");
    if (tok->decode(tok->encode_ordinary(sample)) != sample) bug("decode(encode_ordinary(x)) != x");
  } catch (const std::runtime_error& e) {  // the file's pattern hit PCRE2's limits on the sample
    if (!std::string_view(e.what()).starts_with("split pattern")) bug(std::string("unexpected error: ") + e.what());
  }
  return 0;
}
