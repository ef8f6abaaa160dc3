// GPT-2 in Hugging Face's layout against PyTorch, llm.c's test_gpt2 way: PyTorch wrote a random GPT-2 as HF ships
// it (tests/golden/gpt2_hf/make_gpt2_hf.py: `transformer.` names, Conv1D weights [in, out], the mask buffers, F32),
// a batch, its logits and loss, and the losses of 10 AdamW steps; cppgrad imports the file and must reproduce them.
// Tolerances (docs/gpt2-hf.md):
//   float64 (the F32 weights widened, as PyTorch's float64 run): |a - b| <= 1e-10 + 1e-9 |b|, the golden float64
//     parity runs' bound: only summation order differs (~1e-16 per operation), a mapping mistake is O(1);
//   float32 against PyTorch's float64: |a - b| <= 1e-5 + 1e-4 |b|, the golden float32 runs' bound: float32 rounds
//     at ~6e-8 relative per operation; PyTorch's own float32 run is off its float64 by 2.5e-6 at most here.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "core/autograd.h"
#include "optim/adam.h"
#include "parity/gpt2_hf_golden.h"

namespace cppgrad::test {
namespace {

constexpr double kRtol64 = 1e-9, kAtol64 = 1e-10;
constexpr double kRtol32 = 1e-4, kAtol32 = 1e-5;

nn::GPTOutput run(const nn::GPT& model, const Gpt2HfExpected& e) {
  NoGradGuard no_grad;
  return model.forward(e.t.at("idx"), e.t.at("targets"));
}

TEST(Gpt2Hf, LogitsAndLossMatchPyTorchInFloat64) {
  const Gpt2HfExpected e = read_gpt2_hf_expected();
  auto model = nn::import_gpt2_hf(gpt2_hf_model_path(), e.n_head());
  model->to(DType::Float64);
  const nn::GPTOutput out = run(*model, e);
  const Closeness logits = closeness(out.logits, e.t.at("logits"), kRtol64, kAtol64);
  EXPECT_LE(logits.worst_ratio, 1.0) << "max |diff| " << logits.max_abs;
  EXPECT_LE(closeness(out.loss, e.t.at("loss"), kRtol64, kAtol64).worst_ratio, 1.0);
  std::printf("float64 logits: max |diff| %.2e against PyTorch's float64\n", logits.max_abs);
}

TEST(Gpt2Hf, LogitsAndLossMatchPyTorchInFloat32) {
  const Gpt2HfExpected e = read_gpt2_hf_expected();
  auto model = nn::import_gpt2_hf(gpt2_hf_model_path(), e.n_head());
  ASSERT_EQ(model->parameters().front().dtype(), DType::Float32);
  const nn::GPTOutput out = run(*model, e);
  const Closeness logits = closeness(out.logits, e.t.at("logits"), kRtol32, kAtol32);
  EXPECT_LE(logits.worst_ratio, 1.0) << "max |diff| " << logits.max_abs;
  EXPECT_LE(closeness(out.loss, e.t.at("loss"), kRtol32, kAtol32).worst_ratio, 1.0);
  const Closeness torch32 = closeness(e.t.at("logits_f32"), e.t.at("logits"), kRtol32, kAtol32);
  std::printf("float32 logits: max |diff| %.2e against PyTorch's float64 (PyTorch's float32: %.2e), the worst "
              "element at %.2f of its tolerance (PyTorch's float32: %.2f)\n",
              logits.max_abs, torch32.max_abs, logits.worst_ratio, torch32.worst_ratio);
}

// llm.c's test_gpt2 loop: the loss before each of 10 AdamW steps on the same batch, with cppgrad-gpt's trainer's
// AdamW (betas 0.9 / 0.99, eps 1e-8, decay 0.01 on every parameter), as PyTorch's torch.optim.AdamW ran it.
Tensor adamw_losses(nn::GPT& model, const Gpt2HfExpected& e) {
  optim::Adam adamw(model.named_parameters(),
                    {.lr = e.hp("lr"), .beta1 = e.hp("beta1"), .beta2 = e.hp("beta2"), .eps = e.hp("eps"),
                     .weight_decay = e.hp("weight_decay"), .decoupled_weight_decay = true});
  const std::int64_t steps = std::stoll(e.meta.at("adamw_steps"));
  Tensor losses = Tensor::zeros({steps}, DType::Float64);
  for (std::int64_t s = 0; s < steps; ++s) {
    adamw.zero_grad();
    const Tensor loss = model.forward(e.t.at("idx"), e.t.at("targets")).loss;
    loss.backward();
    adamw.step();
    losses.set({s}, loss.item());
  }
  return losses;
}

TEST(Gpt2Hf, TenAdamWStepsMatchPyTorch) {
  const Gpt2HfExpected e = read_gpt2_hf_expected();
  ASSERT_EQ(e.t.at("adamw_losses").numel(), 10);
  for (const DType dtype : {DType::Float64, DType::Float32}) {
    auto model = nn::import_gpt2_hf(gpt2_hf_model_path(), e.n_head());
    model->to(dtype);
    const Tensor losses = adamw_losses(*model, e);
    const bool f64 = dtype == DType::Float64;
    const Closeness c = closeness(losses, e.t.at("adamw_losses"), f64 ? kRtol64 : kRtol32, f64 ? kAtol64 : kAtol32);
    EXPECT_LE(c.worst_ratio, 1.0) << dtype_name(dtype) << ": max |diff| " << c.max_abs;
    std::printf("%s: 10 AdamW losses %.6f -> %.6f, max |diff| %.2e against PyTorch's float64\n", dtype_name(dtype),
                losses.at({0}), losses.at({9}), c.max_abs);
  }
}

// The test can fail: a mapping that forgets to transpose the one square Conv1D weight (attn.c_proj [C, C], which
// no shape check can catch), or the wrong head count (which no shape can tell), moves the logits by far more than
// the tolerance.
TEST(Gpt2Hf, AMappingMistakeMovesTheLogitsFarBeyondTheTolerance) {
  const Gpt2HfExpected e = read_gpt2_hf_expected();
  {
    auto model = nn::import_gpt2_hf(gpt2_hf_model_path(), e.n_head());
    model->to(DType::Float64);
    NoGradGuard no_grad;
    for (const auto& [name, p] : model->named_parameters())
      if (name.ends_with("attn.c_proj.weight")) p.copy_(p.t().contiguous());  // undo the transpose
    const Closeness c = closeness(run(*model, e).logits, e.t.at("logits"), kRtol64, kAtol64);
    EXPECT_GT(c.worst_ratio, 1e6) << "untransposed attn.c_proj: max |diff| " << c.max_abs;
    std::printf("attn.c_proj untransposed: max |diff| %.2e, %.1e times the float64 tolerance\n", c.max_abs,
                c.worst_ratio);
  }
  {
    auto model = nn::import_gpt2_hf(gpt2_hf_model_path(), 2 * e.n_head());
    const Closeness c = closeness(run(*model, e).logits, e.t.at("logits"), kRtol32, kAtol32);
    EXPECT_GT(c.worst_ratio, 1e3) << "twice the heads: max |diff| " << c.max_abs;
    std::printf("twice the heads: max |diff| %.2e, %.1e times the float32 tolerance\n", c.max_abs, c.worst_ratio);
  }
}

// The rectangular Conv1D weights left [in, out] (the file written as cppgrad's layout by mistake) are refused,
// naming the tensor and both shapes.
TEST(Gpt2Hf, AConv1DWeightInTheWrongOrientationIsRefused) {
  SafetensorsFile f = read_safetensors(gpt2_hf_model_path());
  Tensor& w = f.tensors.at("transformer.h.1.mlp.c_fc.weight");  // [C, 4C] in HF's file
  const Shape hf = w.shape();
  w = w.t().contiguous();
  try {
    nn::gpt2_from_hf(f.tensors, read_gpt2_hf_expected().n_head(), "model.safetensors");
    FAIL() << "a transposed c_fc.weight was accepted";
  } catch (const std::runtime_error& err) {
    const std::string what = err.what();
    EXPECT_NE(what.find("model.safetensors: tensor 'h.1.mlp.c_fc.weight' is float32 " + shape_str({hf[1], hf[0]}) +
                        ", expected " + shape_str(hf) + " [in, out] (HF's Conv1D)"),
              std::string::npos)
        << what;
  }
}

// GPT-2 124M's shapes (not committed: 0.5 GB): `make_gpt2_hf.py --gpt2-124m --out DIR`, then
// CPPGRAD_GPT2_124M_DIR=DIR runs this. Prints the import time and the process's peak RSS.
TEST(Gpt2Hf, Gpt2124MShapesWhenGiven) {
  const char* dir = std::getenv("CPPGRAD_GPT2_124M_DIR");
  if (!dir || !*dir) GTEST_SKIP() << "set CPPGRAD_GPT2_124M_DIR to a directory make_gpt2_hf.py --gpt2-124m wrote";
  const auto t0 = std::chrono::steady_clock::now();
  auto model = nn::import_gpt2_hf((std::filesystem::path(dir) / "model.safetensors").string(), "gpt2");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const Gpt2HfExpected e = read_gpt2_hf_expected(dir);
  const nn::GPTOutput out = run(*model, e);
  const Closeness c = closeness(out.logits, e.t.at("logits"), kRtol32, kAtol32);
  EXPECT_LE(c.worst_ratio, 1.0) << "max |diff| " << c.max_abs;
  EXPECT_LE(closeness(out.loss, e.t.at("loss"), kRtol32, kAtol32).worst_ratio, 1.0);
  std::printf("GPT-2 124M: %lld parameters imported in %.2f s, peak RSS after import %.0f MB; logits [%lld, %lld, "
              "%lld] max |diff| %.2e against PyTorch's float64 (PyTorch's float32: %.2e), loss %.6f vs %.6f\n",
              static_cast<long long>(model->num_parameters()), seconds, usage.ru_maxrss / 1024.0,
              static_cast<long long>(out.logits.shape()[0]), static_cast<long long>(out.logits.shape()[1]),
              static_cast<long long>(out.logits.shape()[2]), c.max_abs,
              closeness(e.t.at("logits_f32"), e.t.at("logits"), kRtol32, kAtol32).max_abs, out.loss.item(),
              e.t.at("loss").item());
}

}  // namespace
}  // namespace cppgrad::test
