// libFuzzer harness: any bytes, parsed as safetensors and loaded into a small reversal model with
// Module::load_state_dict, as Module::load does with a file. Refusals (std::runtime_error from the reader,
// std::invalid_argument from load_state_dict: a missing or unexpected entry, a shape mismatch) are expected.
// load_state_dict's promise is checked too: a refusal changes no parameter, and an acceptance leaves every
// parameter equal to the file's tensor converted to the parameter's dtype.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/generator.h"
#include "core/safetensors.h"
#include "fuzz_util.h"
#include "nn/seq2seq.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cppgrad::Generator gen(0);
  // The model of fuzz/corpus/load_state_dict/tiny.safetensors (fuzz/make_corpus.sh).
  static cppgrad::nn::Seq2SeqTransformer model({.src_vocab = 5, .tgt_vocab = 6, .out_vocab = 5, .d_model = 4,
                                                .n_heads = 1, .n_encoder_layers = 1, .n_decoder_layers = 1,
                                                .d_ff = 4, .max_len = 50},
                                               gen);
  const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  cppgrad::SafetensorsFile f;
  try {
    f = cppgrad::parse_safetensors(bytes, "fuzz");
  } catch (const std::runtime_error&) {
    return 0;
  }
  const cppgrad::nn::StateDict before = cppgrad::fuzz::snapshot(model.state_dict());
  try {
    model.load_state_dict(f.tensors);
  } catch (const std::invalid_argument&) {
    if (!cppgrad::fuzz::same_bits(model.state_dict(), before)) cppgrad::fuzz::bug("a refused load_state_dict changed a parameter");
    return 0;
  }
  for (const auto& [name, p] : model.state_dict())
    if (!cppgrad::fuzz::same_bits(p, f.tensors.at(name).to(p.dtype())))
      cppgrad::fuzz::bug("parameter '" + name + "' is not the file's tensor after load_state_dict");
  return 0;
}
