// GPT-2's Hugging Face layout as a file format (nn/gpt_hf.h): both spellings of the names, the mask buffers and a
// tied lm_head, the refusals (each names the file, the tensor and the shapes), export -> import bit for bit, the
// layout table against the model's own parameters, and GPT-2's named sizes.
#include <fstream>
#include <iterator>

#include "core/autograd.h"
#include "parity/gpt2_hf_golden.h"
#include "test_util.h"

namespace cppgrad::test {
namespace {

std::map<std::string, Tensor> golden_tensors() { return read_safetensors(gpt2_hf_model_path()).tensors; }

void expect_same_parameters(const nn::GPT& a, const nn::GPT& b) {
  const nn::NamedTensors pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].first, pb[i].first);
    EXPECT_TRUE(bitwise_equal(pa[i].second, pb[i].second)) << pa[i].first;
  }
}

// GPT2Model's spelling (the hub's gpt2 repository): no `transformer.` prefix, no mask buffers (newer
// transformers do not save them), here with lm_head.weight present and equal to wte.weight.
TEST(Gpt2Hf, TheUnprefixedSpellingWithoutMaskBuffersLoadsTheSameModel) {
  const std::int64_t n_head = read_gpt2_hf_expected().n_head();
  std::map<std::string, Tensor> bare;
  for (const auto& [name, t] : golden_tensors()) {
    if (name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias")) continue;
    bare.emplace(name.substr(std::string("transformer.").size()), t);
  }
  ASSERT_TRUE(bare.count("wte.weight") && bare.count("h.0.attn.c_attn.weight"));
  bare.emplace("lm_head.weight", bare.at("wte.weight").clone());
  TempDir dir;
  const std::string path = (dir.path / "model.safetensors").string();
  write_safetensors(path, bare);
  expect_same_parameters(*nn::import_gpt2_hf(path, n_head), *nn::import_gpt2_hf(gpt2_hf_model_path(), n_head));
}

TEST(Gpt2Hf, ExportThenImportIsBitForBitAndExportIsHFsFile) {
  const std::int64_t n_head = read_gpt2_hf_expected().n_head();
  auto model = nn::import_gpt2_hf(gpt2_hf_model_path(), n_head);
  TempDir dir;
  const std::string path = (dir.path / "exported.safetensors").string();
  nn::export_gpt2_hf(*model, path);
  expect_same_parameters(*nn::import_gpt2_hf(path, n_head), *model);
  // The exported file is PyTorch's file without the mask buffers, byte for byte in every tensor.
  const SafetensorsFile exported = read_safetensors(path);
  EXPECT_EQ(exported.metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  std::size_t weights = 0;
  for (const auto& [name, t] : golden_tensors()) {
    if (name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias")) continue;
    ++weights;
    ASSERT_TRUE(exported.tensors.count(name)) << name;
    EXPECT_TRUE(bitwise_equal(exported.tensors.at(name), t)) << name;
  }
  EXPECT_EQ(exported.tensors.size(), weights);
}

// The table the importer checks a file against is the model's own parameters: the same names (after the prefix),
// the same order, and the same shapes once each Conv1D weight is transposed.
TEST(Gpt2Hf, TheLayoutIsTheGPTsParametersWithConv1DTransposed) {
  const nn::GPTConfig config{.block_size = 8, .vocab_size = 11, .n_layer = 3, .n_head = 2, .n_embd = 6};
  Generator gen(0);
  const nn::GPT model(config, gen);
  const std::vector<nn::HFTensor> layout = nn::gpt2_hf_layout(config);
  const nn::NamedTensors params = model.named_parameters();
  ASSERT_EQ(layout.size(), params.size());
  for (std::size_t i = 0; i < layout.size(); ++i) {
    EXPECT_EQ("transformer." + layout[i].name, params[i].first);
    const Shape& s = layout[i].shape;
    const Shape in_cppgrad = layout[i].conv1d ? Shape{s[1], s[0]} : s;
    EXPECT_EQ(in_cppgrad, params[i].second.shape()) << layout[i].name;
  }
}

TEST(Gpt2Hf, PresetsAreGPT2sSizes) {
  const nn::GPTConfig small = nn::gpt2_preset("gpt2"), xl = nn::gpt2_preset("gpt2-xl");
  EXPECT_EQ(std::vector<std::int64_t>({small.n_layer, small.n_head, small.n_embd, small.block_size, small.vocab_size}),
            std::vector<std::int64_t>({12, 12, 768, 1024, 50257}));
  EXPECT_EQ(nn::gpt2_preset("gpt2-medium").n_head, 16);
  EXPECT_EQ(nn::gpt2_preset("gpt2-large").n_embd, 1280);
  EXPECT_EQ(std::vector<std::int64_t>({xl.n_layer, xl.n_head, xl.n_embd}), std::vector<std::int64_t>({48, 25, 1600}));
  EXPECT_THROW_MSG(nn::gpt2_preset("gpt3"), std::invalid_argument, "unknown GPT-2 size 'gpt3'");
}

// --------------------------------------------------------------------------------------- refusals
// A small GPT in HF's layout as PyTorch's file has it (mask buffers included), made here so that the messages'
// shapes are this test's own: V 11, n_ctx 6, 2 layers, 2 heads, C 8.
std::map<std::string, Tensor> hf_tensors() {
  Generator gen(1);
  const nn::GPT model({.block_size = 6, .vocab_size = 11, .n_layer = 2, .n_head = 2, .n_embd = 8}, gen);
  std::map<std::string, Tensor> t = nn::gpt2_to_hf(model);
  for (const char* h : {"transformer.h.0.", "transformer.h.1."}) {
    t.emplace(std::string(h) + "attn.bias", Tensor::ones({1, 1, 6, 6}));
    t.emplace(std::string(h) + "attn.masked_bias", Tensor::full({}, -1e4));
  }
  return t;
}

// Each file that does not fit is one std::runtime_error naming the file, the tensor and the shapes.
void expect_refused(std::map<std::string, Tensor> tensors, const std::string& text, std::int64_t n_head = 2) {
  EXPECT_THROW_MSG(nn::gpt2_from_hf(std::move(tensors), n_head, "bad.safetensors"), std::runtime_error,
                   "gpt2_hf: bad.safetensors: " + text);
}

// The same weights stored F64 load into the same float32 model (the model is float32 whatever the file's dtype).
TEST(Gpt2Hf, TheSmallFileLoadsFromF32AndF64Alike) {
  const auto from_f32 = nn::gpt2_from_hf(hf_tensors(), 2, "f32");
  EXPECT_EQ(from_f32->config().n_layer, 2);
  std::map<std::string, Tensor> wide;
  for (const auto& [name, t] : hf_tensors()) wide.emplace(name, t.to(DType::Float64));
  expect_same_parameters(*nn::gpt2_from_hf(wide, 2, "f64"), *from_f32);
}

TEST(Gpt2Hf, RefusesAMissingTensor) {
  auto t = hf_tensors();
  t.erase("transformer.h.1.ln_2.bias");
  expect_refused(t, "missing tensor 'h.1.ln_2.bias' [8] (vocab_size 11, n_embd 8 (wte.weight), n_ctx 6");
  t = hf_tensors();
  t.erase("transformer.wte.weight");
  expect_refused(t, "missing tensor 'wte.weight' ([vocab_size, n_embd])");
}

TEST(Gpt2Hf, RefusesAWrongShape) {
  auto t = hf_tensors();
  t.at("transformer.h.0.attn.c_attn.bias") = Tensor::zeros({3 * 8 + 1});
  expect_refused(t, "tensor 'h.0.attn.c_attn.bias' is float32 [25], expected [24] (vocab_size 11");
  t = hf_tensors();
  t.at("transformer.wpe.weight") = Tensor::zeros({6, 8, 1});
  expect_refused(t, "tensor 'wpe.weight' is float32 [6, 8, 1], expected [n_ctx, n_embd]");
  t = hf_tensors();
  t.at("transformer.wpe.weight") = Tensor::zeros({6, 7});
  expect_refused(t, "tensor 'wpe.weight' is float32 [6, 7], expected [6, 8]");
}

TEST(Gpt2Hf, RefusesAnUnexpectedTensorButIgnoresMaskBuffers) {
  auto t = hf_tensors();
  ASSERT_TRUE(t.count("transformer.h.0.attn.bias") && t.count("transformer.h.0.attn.masked_bias"));
  t.emplace("transformer.h.0.attn.c_attn.scale", Tensor::zeros({3}));
  expect_refused(t,
                 "unexpected tensor 'h.0.attn.c_attn.scale' float32 [3] (not a GPT-2 weight nor a causal-mask buffer");
  t = hf_tensors();
  t.emplace("transformer.ln_f." + std::string(1000, 'x'), Tensor::zeros({1}));  // a hostile name is cut short
  expect_refused(t, "unexpected tensor 'ln_f." + std::string(75, 'x') + "...' (1005 bytes) float32 [1] (not");
  t = hf_tensors();
  t.emplace("transformer.h.2.attn.bias", Tensor::ones({1, 1, 6, 6}));  // a third block of nothing but a mask
  expect_refused(t, "missing tensor 'h.2.ln_1.weight' [8]");
}

TEST(Gpt2Hf, RefusesANonFloatDtype) {
  auto t = hf_tensors();
  t.at("transformer.ln_f.bias") = Tensor::zeros({8}, DType::Int64);
  expect_refused(t, "tensor 'ln_f.bias' is int64 [8]: a weight must be floating (F32, F64, F16 or BF16)");
  // A dtype the reader does not read (I32: four bytes, so the sizes still agree) is refused naming the file, the
  // tensor and the dtype, before any size is trusted.
  TempDir dir;
  const std::string path = (dir.path / "int32.safetensors").string();
  write_safetensors(path, hf_tensors());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t at = bytes.find("\"F32\"");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 5, "\"I32\"");
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_THROW_MSG(nn::import_gpt2_hf(path, 2), std::runtime_error, "int32.safetensors: unknown dtype 'I32' for tensor");
}

// A header can declare shapes of any size over a sparse file: 17 billion parameters (wte.weight [2^24, 1024], 64 GB
// that take no disk) are refused from the header, before anything is allocated or read.
TEST(Gpt2Hf, RefusesShapesTooLargeForAnyGPT2FromTheHeader) {
  TempDir dir;
  const std::string path = (dir.path / "huge.safetensors").string();
  const std::uint64_t wte = (std::uint64_t{1} << 24) * 1024 * 4, wpe = 8 * 1024 * 4, ln = 1024 * 4;
  const std::string header = R"({"wte.weight":{"dtype":"F32","shape":[16777216,1024],"data_offsets":[0,)" +
                             std::to_string(wte) + R"(]},"wpe.weight":{"dtype":"F32","shape":[8,1024],"data_offsets":[)" +
                             std::to_string(wte) + "," + std::to_string(wte + wpe) +
                             R"(]},"h.0.ln_1.weight":{"dtype":"F32","shape":[1024],"data_offsets":[)" +
                             std::to_string(wte + wpe) + "," + std::to_string(wte + wpe + ln) + "]}}";
  {
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t n = header.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << header;
  }
  std::filesystem::resize_file(path, 8 + header.size() + wte + wpe + ln);
  EXPECT_THROW_MSG(nn::import_gpt2_hf(path, 2), std::runtime_error,
                   "huge.safetensors: the shapes make a GPT-2 of 1.72e+10 parameters (vocab_size 16777216, n_embd "
                   "1024, n_ctx 8, n_layer 1), more than the 2.15e+09 cppgrad imports");
}

TEST(Gpt2Hf, RefusesAnUntiedHeadAndBothSpellings) {
  auto t = hf_tensors();
  Tensor head = t.at("transformer.wte.weight").clone();
  head.set({3, 5}, head.at({3, 5}) + 1);
  t.emplace("lm_head.weight", head);
  expect_refused(t, "tensor 'lm_head.weight' differs from 'wte.weight'");
  t = hf_tensors();
  t.emplace("wpe.weight", t.at("transformer.wpe.weight"));
  expect_refused(t, "tensor 'wpe.weight' appears both with and without the 'transformer.' prefix");
}

TEST(Gpt2Hf, RefusesSizesThatCannotBeGPT2) {
  expect_refused(hf_tensors(),
                 "GPTConfig: n_embd (8) must be a multiple of n_head (3) (n_embd 8 from wte.weight [11, 8])",
                 3);
  auto t = hf_tensors();
  std::erase_if(t, [](const auto& kv) { return kv.first.starts_with("transformer.h."); });
  expect_refused(t, "no transformer blocks: no tensor is named h.0.*");
  t = hf_tensors();
  t.at("transformer.wpe.weight") = Tensor::zeros({0, 8});
  expect_refused(t, "tensor 'wpe.weight' is float32 [0, 8]: n_ctx (block_size) 0 is outside [1, 16777216]");
  // more blocks than cppgrad imports: refused before the layout of 1,025 blocks is listed
  t = hf_tensors();
  for (int i = 2; i <= 1024; ++i) t.emplace("transformer.h." + std::to_string(i) + ".ln_1.weight", Tensor::zeros({8}));
  expect_refused(t, "the names hold 1025 transformer blocks (h.N), more than the 1024 cppgrad imports");
  // a preset's head count is refused on a file of another size, before it is tried against n_embd
  TempDir dir;
  const std::string path = (dir.path / "small.safetensors").string();
  write_safetensors(path, hf_tensors());
  EXPECT_THROW_MSG(nn::import_gpt2_hf(path, "gpt2"), std::runtime_error,
                   "small.safetensors: the file holds 2 layers 8 wide, gpt2 has 12 layers 768 wide");
}

}  // namespace
}  // namespace cppgrad::test
