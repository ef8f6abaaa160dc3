#pragma once
// Parameter initialisers, PyTorch's defaults, drawing from an explicit Generator.
#include <cmath>
#include <cstdint>

#include "core/generator.h"
#include "core/tensor.h"

namespace cppgrad::nn::init {

// --- skipping the draws: a model whose values a file replaces ---
// Building GPT-2 124M draws 160 million normals (its Linears' uniforms, then GPT-2's normals over them), seconds of
// log and cos, and loading a checkpoint replaces every one. While a SkipInit is alive on this thread the initialisers
// below draw nothing: a tensor they return is allocated and its values are unset (a load fills them), and the
// generator moves on exactly as drawing would (Generator::skip_normals), so what is drawn after is the same bits.
// PyTorch's torch.nn.utils.skip_init and Hugging Face's from_pretrained skip the same work. SkipInit(false) draws
// again inside an outer one, for values no load will fill (a finetune's new LoRA adapters). Scoped and thread-local
// like the no-grad switch, but not carried into the pool's workers (core/execution_context.h): an initialiser decides
// on the thread that builds the model, and the workers only compute values already decided to be drawn.
bool init_skipped();

class SkipInit {
 public:
  explicit SkipInit(bool skip = true);
  ~SkipInit();
  SkipInit(const SkipInit&) = delete;
  SkipInit& operator=(const SkipInit&) = delete;

 private:
  bool previous_;
};

// U(low, high) of the given shape.
inline Tensor uniform(const Shape& shape, double low, double high, Generator& gen, DType dtype = DType::Float32) {
  Tensor t = Tensor::empty(shape, dtype);
  if (init_skipped()) {
    gen.skip_uniforms(static_cast<std::uint64_t>(t.numel()));
    return t;
  }
  dispatch_floating(dtype, "init::uniform", [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mutable_data<T>();
    const std::int64_t n = t.numel();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(low + (high - low) * gen.uniform());
  });
  return t;
}

// N(0, 1) of the given shape (nn.Embedding's default).
inline Tensor normal(const Shape& shape, Generator& gen, DType dtype = DType::Float32) {
  if (!init_skipped()) return Tensor::randn(shape, gen, dtype);
  Tensor t = Tensor::empty(shape, dtype);
  gen.skip_normals(static_cast<std::uint64_t>(t.numel()));
  return t;
}

// p = N(0, 1) x std in place, in p's dtype (torch.nn.init.normal_(p, 0, std)); call it under a NoGradGuard.
void normal_(const Tensor& p, double std, Generator& gen);

// nn.Linear's default for weight [out, in] and bias [out]: U(-1/sqrt(in), 1/sqrt(in)).
inline double linear_bound(std::int64_t fan_in) { return fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0; }

}  // namespace cppgrad::nn::init
