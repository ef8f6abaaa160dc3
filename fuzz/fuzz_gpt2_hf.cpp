// libFuzzer harness: any bytes, imported as GPT-2 in Hugging Face's layout the way `cppgrad-gpt import` reads a file
// (nn/gpt_hf.h's import_gpt2_hf: the header read and judged alone, then the tensors; 2 heads, the head count of
// fuzz/corpus/gpt2_hf/tiny.safetensors). A refusal is one std::runtime_error "safetensors: fuzz: ..." (the reader)
// or "gpt2_hf: fuzz: ..." (the mapping); anything else is a bug, and so is an input that takes memory or time out of
// proportion (run.sh's -rss_limit_mb and -timeout: the corpus holds a header of many empty tensors and a file with an
// extra tensor, the small shapes of what once cost gigabytes). The promise of an accepted file: the model holds the
// file's weights, so exporting it (gpt2_to_hf) gives back every GPT-2 tensor of the file, under its `transformer.`
// name, as float32 (F16 and BF16 widened, F64 rounded), bit for bit.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "core/safetensors.h"
#include "fuzz_util.h"
#include "nn/gpt_hf.h"

using cppgrad::fuzz::bug;

namespace {

void expect_prefixed(const std::runtime_error& e) {
  const std::string what = e.what();
  if (what.rfind("safetensors: fuzz: ", 0) != 0 && what.rfind("gpt2_hf: fuzz: ", 0) != 0)
    bug("a refusal that names neither the reader nor the mapping with the file: " + what);
}

// What gpt2_to_hf must give back for the file's tensor `name`: its `transformer.` spelling.
std::string prefixed(const std::string& name) {
  return name.rfind("transformer.", 0) == 0 ? name : "transformer." + name;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  std::optional<cppgrad::SafetensorsReader> file;
  std::unique_ptr<cppgrad::nn::GPT> model;
  try {
    file.emplace(bytes, "fuzz");
    model = cppgrad::nn::import_gpt2_hf(*file, /*n_head=*/2);
  } catch (const std::runtime_error& e) {
    expect_prefixed(e);
    return 0;
  }
  const std::map<std::string, cppgrad::Tensor> exported = cppgrad::nn::gpt2_to_hf(*model);
  std::size_t weights = 0;
  for (const cppgrad::SafetensorsEntry& e : file->header().entries) {
    const std::string bare = prefixed(e.name).substr(std::string("transformer.").size());
    if (bare == "lm_head.weight" || bare.ends_with(".attn.bias") || bare.ends_with(".attn.masked_bias")) continue;
    ++weights;
    const auto it = exported.find(prefixed(e.name));
    if (it == exported.end()) bug("the file's tensor '" + e.name + "' is not in the model");
    // exported [in, out] as the file stores Conv1D weights, so an orientation mistake fails here too
    if (!cppgrad::fuzz::same_bits(it->second, file->read(e).to(cppgrad::DType::Float32)))
      bug("the model's '" + e.name + "' is not the file's tensor as float32");
  }
  if (weights != exported.size()) bug("the model has weights the file does not");
  return 0;
}
