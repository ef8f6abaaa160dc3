// libFuzzer harness: any bytes, parsed as safetensors and loaded into a small reversal model with
// Module::load_state_dict, as Module::load does with a file. Refusals (std::runtime_error from the reader,
// std::invalid_argument from load_state_dict: a missing or unexpected entry, a shape mismatch) are expected.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/generator.h"
#include "core/safetensors.h"
#include "nn/seq2seq.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cppgrad::Generator gen(0);
  // The model of fuzz/corpus/load_state_dict/tiny.safetensors (fuzz/make_corpus.sh).
  static cppgrad::nn::Seq2SeqTransformer model({.src_vocab = 5, .tgt_vocab = 6, .out_vocab = 5, .d_model = 4,
                                                .n_heads = 1, .n_encoder_layers = 1, .n_decoder_layers = 1,
                                                .d_ff = 4, .max_len = 50},
                                               gen);
  const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  try {
    const cppgrad::SafetensorsFile f = cppgrad::parse_safetensors(bytes, "fuzz");
    model.load_state_dict(cppgrad::nn::StateDict(f.tensors.begin(), f.tensors.end()));
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
