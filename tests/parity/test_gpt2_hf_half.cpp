// GPT-2 files stored half precision (F16, BF16), as many shared GPT-2s are, against PyTorch: make_gpt2_hf.py
// --dtype f16|bf16 wrote a small GPT-2 (vocabulary 97, context 32, 2 layers, 2 heads, 32 wide) in half precision,
// its float32 twin (PyTorch's `.float()` of every tensor) and the loss PyTorch computes from the `.float()`ed
// weights. cppgrad imports the half file as float32:
//   exactly as `.float()`: the same model as the twin's import, bit for bit (weights planted at the formats'
//     subnormals and smallest normals included);
//   the same loss as PyTorch, to the float32 parity bound (|a - b| <= 1e-5 + 1e-4 |b|, test_gpt2_hf_parity.cpp).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "core/autograd.h"
#include "parity/gpt2_hf_golden.h"

namespace cppgrad::test {
namespace {

// The three files of one half dtype, or a skip: a golden set made before half files existed (CPPGRAD_GOLDEN_DIR)
// has none.
struct HalfFiles {
  std::string model, twin;
  Gpt2HfExpected expected;
};

std::optional<HalfFiles> half_files(const std::string& dtype) {
  const std::filesystem::path dir = gpt2_hf_dir();
  HalfFiles f{(dir / ("model_" + dtype + ".safetensors")).string(),
              (dir / ("model_" + dtype + "_twin.safetensors")).string(), {}};
  const std::filesystem::path expected = dir / ("expected_" + dtype + ".safetensors");
  if (!std::filesystem::exists(f.model) || !std::filesystem::exists(f.twin) || !std::filesystem::exists(expected))
    return std::nullopt;
  SafetensorsFile e = read_safetensors(expected.string());
  f.expected = {std::move(e.tensors), std::move(e.metadata)};
  return f;
}

class Gpt2HfHalf : public ::testing::TestWithParam<std::string> {};

TEST_P(Gpt2HfHalf, ImportsAsPyTorchsFloatAndGivesPyTorchsLoss) {
  const std::optional<HalfFiles> f = half_files(GetParam());
  if (!f)
    GTEST_SKIP() << gpt2_hf_dir() << " has no model_" << GetParam() << ".safetensors (make_gpt2_hf.py --dtype "
                 << GetParam() << " writes it)";
  // The file really is half precision, every tensor of it.
  const SafetensorsReader reader(f->model);
  for (const SafetensorsEntry& e : reader.header().entries)
    EXPECT_STREQ(stored_code(e.dtype), GetParam() == "f16" ? "F16" : "BF16") << e.name;

  const std::int64_t n_head = f->expected.n_head();
  const auto model = nn::import_gpt2_hf(f->model, n_head), twin = nn::import_gpt2_hf(f->twin, n_head);
  const nn::NamedTensors a = model->named_parameters(), b = twin->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].second.dtype(), DType::Float32);
    EXPECT_TRUE(bitwise_equal(a[i].second, b[i].second)) << a[i].first << " is not PyTorch's .float() of the file";
  }

  NoGradGuard no_grad;
  const Tensor loss = model->forward(f->expected.t.at("idx"), f->expected.t.at("targets")).loss;
  const Tensor twin_loss = twin->forward(f->expected.t.at("idx"), f->expected.t.at("targets")).loss;
  EXPECT_EQ(loss.item(), twin_loss.item());
  const Closeness c = closeness(loss, f->expected.t.at("loss"), 1e-4, 1e-5);
  EXPECT_LE(c.worst_ratio, 1.0) << "loss " << loss.item() << " vs PyTorch's " << f->expected.t.at("loss").item();
  std::printf("%s: loss %.7f, PyTorch's float64 %.7f (float32 %.7f)\n", GetParam().c_str(), loss.item(),
              f->expected.t.at("loss").item(), f->expected.t.at("loss_f32").item());
}

// The comparison can fail: the planted subnormals are in the file (a conversion that flushed them to zero would
// differ from the twin), and reading the 16-bit patterns as the other half format moves the loss far off.
TEST_P(Gpt2HfHalf, TheComparisonCanFail) {
  const std::optional<HalfFiles> f = half_files(GetParam());
  if (!f) GTEST_SKIP() << "no model_" << GetParam() << ".safetensors in " << gpt2_hf_dir();
  const SafetensorsFile twin = read_safetensors(f->twin);
  const std::vector<float> row = twin.tensors.at("transformer.wte.weight").narrow(0, 0, 1).to_vector<float>();
  const int subnormals = static_cast<int>(std::count_if(row.begin(), row.begin() + 8, [](float x) {
    return x != 0 && std::fpclassify(x) == FP_SUBNORMAL;
  }));
  const bool f16 = GetParam() == "f16";
  EXPECT_EQ(subnormals, f16 ? 0 : 3) << "bfloat16 keeps float32's subnormals; float16's are normal in float32";
  EXPECT_EQ(row[0], std::ldexp(1.0f, -24));  // float16's smallest subnormal (a normal bfloat16)
  EXPECT_EQ(row[4], f16 ? 0.0f : std::ldexp(1.0f, -133));  // bfloat16's smallest subnormal (float16: 0)

  // The file with every dtype code swapped for the other half format's.
  std::string text;
  {
    std::ifstream in(f->model, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t old_size = text.size();
  const std::string from = f16 ? "\"F16\"" : "\"BF16\"", to = f16 ? "\"BF16\"" : "\"F16\"";
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos;) text.replace(at, from.size(), to);
  // The header changed length: rewrite the length field (the data section follows the header wherever it ends).
  std::uint64_t length = 0;
  std::memcpy(&length, text.data(), 8);
  length = length + text.size() - old_size;
  std::memcpy(text.data(), &length, 8);
  const std::vector<std::byte> swapped(reinterpret_cast<const std::byte*>(text.data()),
                                       reinterpret_cast<const std::byte*>(text.data()) + text.size());
  const auto wrong = nn::import_gpt2_hf(SafetensorsReader(swapped, "swapped"), f->expected.n_head());
  NoGradGuard no_grad;
  const Tensor loss = wrong->forward(f->expected.t.at("idx"), f->expected.t.at("targets")).loss;
  const Closeness c = closeness(loss, f->expected.t.at("loss"), 1e-4, 1e-5);
  EXPECT_GT(c.worst_ratio, 100.0) << "read as the other half format, loss " << loss.item();
}

INSTANTIATE_TEST_SUITE_P(Gpt2HfHalf, Gpt2HfHalf, ::testing::Values("f16", "bf16"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace cppgrad::test
