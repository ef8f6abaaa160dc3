// GPT-2 in Hugging Face's layout (nn/gpt_hf.h): the names, the config from the shapes, the checks, the copy in, the
// copy out. Shapes use nanoGPT's names: V vocab_size, C n_embd, n_ctx block_size, L n_layer.
#include "nn/gpt_hf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include "core/autograd.h"
#include "nn/init.h"

namespace cppgrad::nn {

namespace {

constexpr std::string_view kPrefix = "transformer.";
// No GPT-2 size is near this (the largest is V 50257); bounding every inferred size before anything is allocated
// also keeps 4C, 3C and V C far from overflowing int64.
constexpr std::int64_t kMaxSize = std::int64_t{1} << 24;
// A header can declare any shapes (over a sparse file, at no cost to its maker), and the import allocates what they
// say: the config is bounded before anything is listed or allocated. GPT-2 XL has 48 blocks and 1.56e9 parameters.
constexpr std::int64_t kMaxLayers = 1024;
constexpr double kMaxParameters = 2147483648.0;  // 2^31: 8.6 GB in float32

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("gpt2_hf: " + path + ": " + what);
}

// A name from the file, quoted as a message shows it: cut short, so that a hostile 100 MB name cannot flood a log.
std::string quote_name(const std::string& name) {
  constexpr std::size_t kMaxShown = 80;
  if (name.size() <= kMaxShown) return "'" + name + "'";
  return fmt::format("'{}...' ({} bytes)", name.substr(0, kMaxShown), name.size());
}

// What the layout check reads of a tensor, from a file's header or from a Tensor: no values.
struct Described {
  std::string dtype;  // as messages name it: "float32", "float16"
  Shape shape;
  bool floating = false;
};
using Descriptions = std::map<std::string, Described>;  // by name

std::string describe(const Described& d) { return fmt::format("{} {}", d.dtype, shape_str(d.shape)); }

// "h.12.attn.bias" -> "12"; "" for a name outside the blocks.
std::string layer_of(const std::string& name) {
  if (name.rfind("h.", 0) != 0) return "";
  const std::size_t dot = name.find('.', 2);
  if (dot == std::string::npos || dot == 2) return "";
  const std::string index = name.substr(2, dot - 2);
  return std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; }) ? index : "";
}

// The causal-mask buffers HF's GPT-2 attention kept in its state dict: h.<i>.attn.bias [1, 1, n_ctx, n_ctx] and
// h.<i>.attn.masked_bias []. Ignored whatever they hold (cppgrad builds its mask), and never read.
bool is_mask_buffer(const std::string& name) {
  const std::string layer = layer_of(name);
  if (layer.empty()) return false;
  const std::string rest = name.substr(2 + layer.size());
  return rest == ".attn.bias" || rest == ".attn.masked_bias";
}

// The file's descriptions under HF's names without the `transformer.` prefix, and each one's name in the file.
struct Unprefixed {
  Descriptions tensors;                            // by bare name
  std::map<std::string, std::string> file_names;   // bare name -> the file's name
};
Unprefixed without_prefix(const Descriptions& file, const std::string& path) {
  Unprefixed out;
  for (const auto& [name, d] : file) {
    const std::string bare = name.rfind(kPrefix, 0) == 0 ? name.substr(kPrefix.size()) : name;
    if (!out.tensors.emplace(bare, d).second)
      fail(path, fmt::format("tensor {} appears both with and without the '{}' prefix", quote_name(bare), kPrefix));
    out.file_names.emplace(bare, name);
  }
  return out;
}

const Described& require(const Descriptions& tensors, const std::string& name, const char* expected,
                         const std::string& path) {
  const auto it = tensors.find(name);
  if (it == tensors.end()) fail(path, fmt::format("missing tensor '{}' ({})", name, expected));
  if (it->second.shape.size() != 2)
    fail(path, fmt::format("tensor '{}' is {}, expected {}", name, describe(it->second), expected));
  return it->second;
}

// One inferred size, bounded before it sizes anything.
std::int64_t bounded(std::int64_t size, const char* what, const std::string& name, const Described& t,
                     const std::string& path) {
  if (size < 1 || size > kMaxSize)
    fail(path, fmt::format("tensor '{}' is {}: {} {} is outside [1, {}]", name, describe(t), what, size, kMaxSize));
  return size;
}

// vocab_size and n_embd from wte.weight [V, C], block_size from wpe.weight [n_ctx, C], n_layer from how many
// distinct h.<i> the names hold (each must then be complete: layout's check), n_head given.
GPTConfig infer_config(const Descriptions& tensors, std::int64_t n_head, const std::string& path) {
  const Described& wte = require(tensors, "wte.weight", "[vocab_size, n_embd]", path);
  const Described& wpe = require(tensors, "wpe.weight", "[n_ctx, n_embd]", path);
  GPTConfig c;
  c.vocab_size = bounded(wte.shape[0], "vocab_size", "wte.weight", wte, path);
  c.n_embd = bounded(wte.shape[1], "n_embd", "wte.weight", wte, path);
  c.block_size = bounded(wpe.shape[0], "n_ctx (block_size)", "wpe.weight", wpe, path);
  std::set<std::string> layers;
  for (const auto& [name, t] : tensors)
    if (const std::string layer = layer_of(name); !layer.empty()) layers.insert(layer);
  c.n_layer = static_cast<std::int64_t>(layers.size());
  if (c.n_layer == 0) fail(path, "no transformer blocks: no tensor is named h.0.*");
  if (c.n_layer > kMaxLayers)
    fail(path, fmt::format("the names hold {} transformer blocks (h.N), more than the {} cppgrad imports (gpt2-xl has "
                           "48)", c.n_layer, kMaxLayers));
  c.n_head = n_head;
  c.dropout = 0.0;
  return c;
}

// A preset's n_head fits only its own n_layer and n_embd; then n_head must split n_embd.
void check_heads(const GPTConfig& c, const GPTConfig* preset, std::string_view preset_name, const std::string& path) {
  if (preset && (c.n_layer != preset->n_layer || c.n_embd != preset->n_embd))
    fail(path, fmt::format("the file holds {} layers {} wide, {} has {} layers {} wide", c.n_layer, c.n_embd,
                           preset_name, preset->n_layer, preset->n_embd));
  try {
    check_config(c);
  } catch (const std::invalid_argument& e) {
    fail(path, fmt::format("{} (n_embd {} from wte.weight [{}, {}])", e.what(), c.n_embd, c.vocab_size, c.n_embd));
  }
}

// The parameters the shapes make (per block 12 C^2 + 13 C), counted in double: no product can overflow.
void check_size(const GPTConfig& c, const std::string& path) {
  const double C = static_cast<double>(c.n_embd);
  const double parameters = static_cast<double>(c.vocab_size + c.block_size) * C +
                            static_cast<double>(c.n_layer) * (12 * C * C + 13 * C) + 2 * C;
  if (parameters > kMaxParameters)
    fail(path, fmt::format("the shapes make a GPT-2 of {:.3g} parameters (vocab_size {}, n_embd {}, n_ctx {}, n_layer "
                           "{}), more than the {:.3g} cppgrad imports (gpt2-xl has 1.56e9)",
                           parameters, c.vocab_size, c.n_embd, c.block_size, c.n_layer, kMaxParameters));
}

void check_float(const std::string& name, const Described& t, const std::string& path) {
  if (!t.floating)
    fail(path, fmt::format("tensor '{}' is {}: a weight must be floating (F32, F64, F16 or BF16)", name, describe(t)));
}

// Every tensor of the layout present, floating, shaped as the config says; nothing else but mask buffers and
// lm_head.weight shaped as wte.weight (whose values check_tied_head compares once read).
void check_tensors(const Descriptions& tensors, const std::vector<HFTensor>& layout, const GPTConfig& c,
                   const std::string& path) {
  const std::string sizes = fmt::format("vocab_size {}, n_embd {} (wte.weight), n_ctx {} (wpe.weight), n_layer {}",
                                        c.vocab_size, c.n_embd, c.block_size, c.n_layer);
  std::set<std::string> known;
  for (const HFTensor& e : layout) {
    known.insert(e.name);
    const auto it = tensors.find(e.name);
    if (it == tensors.end()) fail(path, fmt::format("missing tensor '{}' {} ({})", e.name, shape_str(e.shape), sizes));
    check_float(e.name, it->second, path);
    if (it->second.shape != e.shape)
      fail(path, fmt::format("tensor '{}' is {}, expected {}{} ({})", e.name, describe(it->second),
                             shape_str(e.shape), e.conv1d ? " [in, out] (HF's Conv1D)" : "", sizes));
  }
  if (const auto head = tensors.find("lm_head.weight"); head != tensors.end()) {
    check_float("lm_head.weight", head->second, path);
    if (head->second.shape != tensors.at("wte.weight").shape)
      fail(path, fmt::format("tensor 'lm_head.weight' is {}, expected wte.weight's shape {} (tied)",
                             describe(head->second), shape_str(tensors.at("wte.weight").shape)));
  }
  for (const auto& [name, t] : tensors)
    if (!known.count(name) && name != "lm_head.weight" && !is_mask_buffer(name))
      fail(path, fmt::format("unexpected tensor {} {} (not a GPT-2 weight nor a causal-mask buffer; {})",
                             quote_name(name), describe(t), sizes));
}

// Bit for bit, in wte's dtype: lm_head reads wte's table in cppgrad, so a file whose head differs cannot be loaded.
void check_tied_head(const Tensor& head, const Tensor& wte, const std::string& path) {
  const Tensor a = head.to(wte.dtype()).contiguous(), b = wte.contiguous();
  const std::size_t bytes = static_cast<std::size_t>(a.numel()) * dtype_size(a.dtype());
  const std::byte* pa = a.impl().storage->data() + a.offset() * static_cast<std::int64_t>(dtype_size(a.dtype()));
  const std::byte* pb = b.impl().storage->data() + b.offset() * static_cast<std::int64_t>(dtype_size(b.dtype()));
  if (std::memcmp(pa, pb, bytes) != 0)
    fail(path, "tensor 'lm_head.weight' differs from 'wte.weight': GPT-2 ties them, and so does cppgrad's GPT");
}

}  // namespace

namespace {

struct Preset {
  std::string_view name;
  std::int64_t n_layer, n_head, n_embd;
};
constexpr Preset kPresets[] = {
    {"gpt2", 12, 12, 768}, {"gpt2-medium", 24, 16, 1024}, {"gpt2-large", 36, 20, 1280}, {"gpt2-xl", 48, 25, 1600}};

}  // namespace

GPTConfig gpt2_preset(std::string_view name) {
  for (const Preset& p : kPresets)
    if (p.name == name)
      return {.block_size = 1024, .vocab_size = 50257, .n_layer = p.n_layer, .n_head = p.n_head, .n_embd = p.n_embd};
  throw std::invalid_argument(
      fmt::format("gpt2_preset: unknown GPT-2 size '{}' (gpt2, gpt2-medium, gpt2-large, gpt2-xl)", name));
}

std::vector<std::string_view> gpt2_preset_names() {
  std::vector<std::string_view> names;
  for (const Preset& p : kPresets) names.push_back(p.name);
  return names;
}

// HF's names and shapes, in GPT2Model's order. c_attn [C, 3C]: q, k and v side by side along the output, as
// cppgrad's [3C, C] stacks them along its rows, so a transpose is the whole conversion.
std::vector<HFTensor> gpt2_hf_layout(const GPTConfig& c) {
  const std::int64_t V = c.vocab_size, C = c.n_embd, n_ctx = c.block_size;
  std::vector<HFTensor> out{{"wte.weight", {V, C}}, {"wpe.weight", {n_ctx, C}}};
  for (std::int64_t i = 0; i < c.n_layer; ++i) {
    const std::string h = fmt::format("h.{}.", i);
    const std::vector<HFTensor> block{
        {h + "ln_1.weight", {C}},
        {h + "ln_1.bias", {C}},
        {h + "attn.c_attn.weight", {C, 3 * C}, true},  // cppgrad [3C, C]
        {h + "attn.c_attn.bias", {3 * C}},
        {h + "attn.c_proj.weight", {C, C}, true},      // square: only the values tell a missed transpose
        {h + "attn.c_proj.bias", {C}},
        {h + "ln_2.weight", {C}},
        {h + "ln_2.bias", {C}},
        {h + "mlp.c_fc.weight", {C, 4 * C}, true},     // cppgrad [4C, C]
        {h + "mlp.c_fc.bias", {4 * C}},
        {h + "mlp.c_proj.weight", {4 * C, C}, true},   // cppgrad [C, 4C]
        {h + "mlp.c_proj.bias", {C}}};
    out.insert(out.end(), block.begin(), block.end());
  }
  out.push_back({"ln_f.weight", {C}});
  out.push_back({"ln_f.bias", {C}});
  return out;
}

namespace {

// A file's layout judged from names, dtypes and shapes alone: the config, and which of the file's tensors to read.
struct Checked {
  GPTConfig config;
  std::vector<HFTensor> layout;
  std::map<std::string, std::string> to_read;  // bare name -> the file's name: the layout's tensors and lm_head
};

Checked check_layout(const Descriptions& file, std::int64_t n_head, const GPTConfig* preset,
                     std::string_view preset_name, const std::string& path) {
  Unprefixed u = without_prefix(file, path);
  Checked c;
  c.config = infer_config(u.tensors, n_head, path);
  check_heads(c.config, preset, preset_name, path);
  check_size(c.config, path);
  c.layout = gpt2_hf_layout(c.config);
  check_tensors(u.tensors, c.layout, c.config, path);
  // the mask buffers (48 MB at 124M) are never read
  std::erase_if(u.file_names, [](const auto& e) { return is_mask_buffer(e.first); });
  c.to_read = std::move(u.file_names);
  return c;
}

// The checked tensors, read by `read(file name)`, into a new GPT: a present lm_head.weight compared with wte.weight
// first, then the model allocated and each parameter read, copied in (Conv1D weights transposed) and let go in
// turn, so the import holds the model and one tensor of the file, not the whole file besides.
template <typename Read>
std::unique_ptr<GPT> read_and_build(const Checked& c, Read read, const std::string& path) {
  if (const auto head = c.to_read.find("lm_head.weight"); head != c.to_read.end())
    check_tied_head(read(head->second), read(c.to_read.at("wte.weight")), path);
  std::map<std::string, bool> conv1d;
  for (const HFTensor& e : c.layout) conv1d[e.name] = e.conv1d;
  Generator gen(0);
  auto model = [&] {
    const init::SkipInit skip;  // every value is the file's
    return std::make_unique<GPT>(c.config, gen);
  }();
  NoGradGuard no_grad;
  for (const auto& [name, p] : model->named_parameters()) {
    const std::string hf = name.rfind(kPrefix, 0) == 0 ? name.substr(kPrefix.size()) : name;
    const auto file_name = c.to_read.find(hf);
    if (file_name == c.to_read.end() || !conv1d.count(hf))
      throw std::logic_error("gpt2_hf: cppgrad's parameter '" + name + "' has no place in gpt2_hf_layout");
    const Tensor source = read(file_name->second);
    p.copy_((conv1d.at(hf) ? source.t() : source).to(p.dtype()));  // [in, out] -> [out, in]
  }
  return model;
}

std::unique_ptr<GPT> from_tensors(std::map<std::string, Tensor> tensors, std::int64_t n_head,
                                  const std::string& path) {
  Descriptions file;
  for (const auto& [name, t] : tensors)
    file.emplace(name, Described{dtype_name(t.dtype()), t.shape(), is_floating(t.dtype())});
  const Checked c = check_layout(file, n_head, nullptr, "", path);
  return read_and_build(c, [&](const std::string& name) { return tensors.at(name); }, path);
}

// The header alone is judged; only a file that passes has its tensors read.
std::unique_ptr<GPT> from_file(const SafetensorsReader& file, std::int64_t n_head, const GPTConfig* preset,
                               std::string_view preset_name) {
  Descriptions described;
  std::map<std::string, const SafetensorsEntry*> entries;
  for (const SafetensorsEntry& e : file.header().entries) {
    described.emplace(e.name, Described{stored_name(e.dtype), e.shape, is_floating(e.dtype)});
    entries.emplace(e.name, &e);
  }
  const Checked c = check_layout(described, n_head, preset, preset_name, file.path());
  return read_and_build(c, [&](const std::string& name) { return file.read(*entries.at(name)); }, file.path());
}

}  // namespace

std::unique_ptr<GPT> gpt2_from_hf(std::map<std::string, Tensor> tensors, std::int64_t n_head,
                                  const std::string& path_for_errors) {
  return from_tensors(std::move(tensors), n_head, path_for_errors);
}

std::unique_ptr<GPT> import_gpt2_hf(const SafetensorsReader& file, std::int64_t n_head) {
  return from_file(file, n_head, nullptr, "");
}

std::unique_ptr<GPT> import_gpt2_hf(const std::string& path, std::int64_t n_head) {
  return from_file(SafetensorsReader(path), n_head, nullptr, "");
}

std::unique_ptr<GPT> import_gpt2_hf(const std::string& path, std::string_view preset) {
  const GPTConfig want = gpt2_preset(preset);
  return from_file(SafetensorsReader(path), want.n_head, &want, preset);
}

namespace {

// The model is GPT-2's architecture at its own sizes: every config row as a GPT-2 of those sizes has it (a field added
// to GPTConfig, an RMSNorm say, at its default), and its parameters exactly GPT-2's.
void check_gpt2_architecture(const GPT& model, const std::map<std::string, bool>& layout) {
  const GPTConfig& c = model.config();
  if (const auto changed = architecture_changes(c); !changed.empty()) {
    const auto& row = *changed.front();
    throw std::invalid_argument(fmt::format("gpt2_to_hf: this model's {} is {}; GPT-2's is {}, and Hugging Face's "
                                            "GPT2LMHeadModel reads no other", row.name, config_text(row.get(c)),
                                            config_text(row.get(GPTConfig{}))));
  }
  std::size_t count = 0;
  for (const auto& [name, p] : model.named_parameters()) {
    if (!layout.count(name))
      throw std::invalid_argument("gpt2_to_hf: this model has a parameter GPT-2 has not, '" + name + "'");
    ++count;
  }
  if (count != layout.size())
    throw std::invalid_argument(fmt::format("gpt2_to_hf: this model has {} of GPT-2's {} parameters", count, layout.size()));
}

}  // namespace

std::map<std::string, Tensor> gpt2_to_hf(const GPT& model) {
  std::map<std::string, bool> conv1d;
  for (const HFTensor& e : gpt2_hf_layout(model.config())) conv1d[std::string(kPrefix) + e.name] = e.conv1d;
  check_gpt2_architecture(model, conv1d);
  std::map<std::string, Tensor> out;
  for (const auto& [name, p] : model.named_parameters()) {
    const Tensor value = p.detach().to(DType::Float32);
    out.emplace(name, conv1d.at(name) ? value.t().contiguous() : value.contiguous());  // [out, in] -> [in, out]
  }
  return out;
}

void export_gpt2_hf(const GPT& model, const std::string& path) {
  write_safetensors(path, gpt2_to_hf(model), {{"format", "pt"}});
}

}  // namespace cppgrad::nn
