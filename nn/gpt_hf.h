#pragma once
// GPT-2 in Hugging Face's layout: read a `model.safetensors` as the hub ships GPT-2 into an nn::GPT, and write one.
//
// HF's names are nanoGPT's and cppgrad's (transformer.wte.weight, transformer.h.0.attn.c_attn.weight, ...), with
// three differences, which are this file's whole job (nanoGPT's from_pretrained makes the same moves):
//   - the `transformer.` prefix: GPT2LMHeadModel's files have it, GPT2Model's (the hub's gpt2 repository) do not;
//     both are read, a file holding both spellings of one tensor is refused;
//   - the four Conv1D weights of each block are stored [in, out] (y = x W + b, OpenAI's TensorFlow layout) where
//     cppgrad's Linear holds [out, in]: they are transposed on the way in and on the way out;
//   - the causal-mask buffers attn.bias [1, 1, n_ctx, n_ctx] and attn.masked_bias [] (older files carry them) are
//     ignored: cppgrad's attention builds its mask. lm_head.weight is tied to wte.weight: absent (HF drops tied
//     copies) or present and equal to it bit for bit.
// The config comes from the shapes: vocab_size and n_embd from wte.weight [V, C], block_size from wpe.weight
// [n_ctx, C], n_layer from the h.N count. n_head shapes cannot tell (c_attn is [C, 3C] for any head count), so the
// caller gives it, or names one of GPT-2's sizes (gpt2_preset).
//
// Files are read as hostile (core/safetensors.h bounds every size and offset); on top of that, anything that does
// not fit GPT-2 (a missing or unexpected tensor, a wrong shape, a non-float dtype, sizes out of range) is refused
// with one std::runtime_error "gpt2_hf: <path>: tensor '<name>': <what>, with the shapes", before the model is
// built. Everything is float32 once loaded: the hub ships F32; F16 and BF16 files (common among shared GPT-2s) are
// widened exactly, as PyTorch's `.float()` does; an F64 file is rounded to float32.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/safetensors.h"
#include "nn/gpt.h"

namespace cppgrad::nn {

// GPT-2's four sizes (block_size 1024, vocab_size 50257, dropout 0):
//   "gpt2" 124M: 12 layers, 12 heads, 768 wide     "gpt2-medium" 350M: 24 layers, 16 heads, 1024 wide
//   "gpt2-large" 774M: 36 layers, 20 heads, 1280   "gpt2-xl" 1558M: 48 layers, 25 heads, 1600 wide
// Throws std::invalid_argument listing the names for any other.
GPTConfig gpt2_preset(std::string_view name);
// The four names, smallest first.
std::vector<std::string_view> gpt2_preset_names();

// One tensor of a GPT-2 file: its HF name without the `transformer.` prefix, its shape in the file, and whether it
// is a Conv1D weight (stored [in, out], transposed to cppgrad's [out, in]).
struct HFTensor {
  std::string name;  // "h.0.attn.c_attn.weight"
  Shape shape;       // [C, 3C]
  bool conv1d = false;
};

// Every tensor an HF GPT-2 file of this config must hold, in HF's order (mask buffers and lm_head.weight aside).
std::vector<HFTensor> gpt2_hf_layout(const GPTConfig& config);

// Reads `path` into a float32 GPT of the file's config with n_head heads (the preset's overload also checks that
// the file has the preset's n_layer and n_embd). The layout (every tensor's name, dtype and shape) is judged from
// the header alone; no tensor's bytes are read before it passes, and the mask buffers never are. Throws
// std::runtime_error as above.
std::unique_ptr<GPT> import_gpt2_hf(const std::string& path, std::int64_t n_head);
std::unique_ptr<GPT> import_gpt2_hf(const std::string& path, std::string_view preset);
// The same from a reader already opened (bytes in memory: the fuzz harness).
std::unique_ptr<GPT> import_gpt2_hf(const SafetensorsReader& file, std::int64_t n_head);

// The same from tensors already read (a test rewrites a file's tensors in memory); path_for_errors names them.
std::unique_ptr<GPT> gpt2_from_hf(std::map<std::string, Tensor> tensors, std::int64_t n_head,
                                  const std::string& path_for_errors);

// The model's tensors as GPT2LMHeadModel saves them: `transformer.`-prefixed names, Conv1D weights [in, out],
// float32, no lm_head.weight (tied) and no mask buffers. Only a model of GPT-2's architecture can be so written: a
// config field GPT-2 does not have, set off its default (GPTConfig rows beyond the sizes), or parameters other than
// GPT-2's layout, are a std::invalid_argument naming the first, before anything is written.
std::map<std::string, Tensor> gpt2_to_hf(const GPT& model);
// gpt2_to_hf written to `path` (atomically), with the metadata save_pretrained writes, {"format": "pt"}
// (transformers' from_pretrained checks it; some of its versions refuse a file without it).
void export_gpt2_hf(const GPT& model, const std::string& path);

}  // namespace cppgrad::nn
