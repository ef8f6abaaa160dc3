#pragma once
// The precision of the linear layers' products: float32 (the default) or bfloat16, what
// torch.autocast("cpu", dtype=torch.bfloat16) does to them. Under bfloat16, each product of `linear` (every Linear
// layer, the GPT's lm_head: x W^T forward, g W and g^T x backward) reads its two inputs rounded to bfloat16
// (core/bfloat16.h) and sums their products in float32: core/kernels/gemm_bf16.h defines it bit for bit, the same on
// every CPU. Everything else stays float32: the result, the weights and the optimizer's moments, layer_norm, softmax,
// gelu, the loss, and `matmul` itself, so attention's products (q k^T, weights @ v) are float32 in its fused op and in
// every composition alike. float64 is never rounded (the gradient checks run there).
//
//   {
//     LinearPrecisionGuard bf16(LinearPrecision::BFloat16);
//     loss = model(x);          // every linear layer's product in bfloat16
//   }
//   loss.backward();            // each product's backward in the precision its forward ran in
//
// The switch is a field of the execution context (core/execution_context.h), so it holds in every piece of work the
// thread hands to the pool.
namespace cppgrad {

enum class LinearPrecision { Float32, BFloat16 };

// This thread's precision.
LinearPrecision linear_precision();

// "float32" or "bfloat16": the names --dtype takes.
const char* linear_precision_name(LinearPrecision precision);

// Sets this thread's precision for its lifetime, and puts the previous one back.
class LinearPrecisionGuard {
 public:
  explicit LinearPrecisionGuard(LinearPrecision precision);
  ~LinearPrecisionGuard();
  LinearPrecisionGuard(const LinearPrecisionGuard&) = delete;
  LinearPrecisionGuard& operator=(const LinearPrecisionGuard&) = delete;

 private:
  LinearPrecision previous_;
};

}  // namespace cppgrad
