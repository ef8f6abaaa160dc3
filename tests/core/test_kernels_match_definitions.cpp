// Every fast float32 kernel against the readable definition it stands in for. float64 always runs the
// definitions (core/dispatch.h), so each case runs an op twice on the same random inputs: float32 (the kernel,
// forward and its closed-form backward) and float64 (the definition, its backward from the ops it is made of),
// and compares the output and every input's gradient. Shapes, strides (transposed and sliced views) and masks
// are drawn at random per seed. The tolerance is stated once: float32 rounding, relative to the largest value.
#include <algorithm>
#include <array>
#include "core/bit_cast.h"
#include <cmath>
#include <functional>
#include <string>

#include "core/autograd.h"
#include "core/kernels/gemm.h"
#include "core/kernels/packed_weights.h"
#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/layer_norm.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "optim/adam.h"
#include "test_util.h"

namespace cppgrad {
namespace {

constexpr double kTolerance = 2e-5;  // |float32 - float64| <= kTolerance * (1 + max |float64|), per tensor

using Inputs = std::vector<Tensor>;
using Op = std::function<Tensor(const Inputs&)>;

// The largest gap between the float32 run (kernels) and the float64 run (definitions) over the output and the
// gradient of every floating input, each relative to 1 + that tensor's largest float64 value; and where it was.
struct Gap {
  double worst = 0;
  std::string where;
};

// The same leaves twice, both requiring grad: float32 copies (the kernels' run) and float64 copies (the
// definitions'); integer inputs (targets, masks) are shared.
struct Twins {
  Inputs in32, in64;
};

Twins twin_inputs(const Inputs& inputs64) {
  Twins t;
  for (const Tensor& x : inputs64) {
    const bool floating = is_floating(x.dtype());
    Tensor a = floating ? x.detach().to(DType::Float32) : x, b = floating ? x.detach().clone() : x;
    if (floating) a.set_requires_grad(true), b.set_requires_grad(true);
    t.in32.push_back(a), t.in64.push_back(b);
  }
  return t;
}

// Keeps in `gap` the larger of it and got's gap from want, relative to 1 + want's largest value.
void widen(Gap& gap, const Tensor& got, const Tensor& want, const std::string& what) {
  if (!want.defined()) return;
  const auto g = got.to(DType::Float64).to_vector<double>(), w = want.to_vector<double>();
  double scale = 0, diff = 0;
  for (std::size_t i = 0; i < w.size(); ++i) scale = std::max(scale, std::abs(w[i])), diff = std::max(diff, std::abs(g[i] - w[i]));
  if (diff / (1 + scale) >= gap.worst) gap = {diff / (1 + scale), what};
}

Gap compare_fast_with_definition(const Op& op, const Inputs& inputs64, std::uint64_t seed) {
  const Twins t = twin_inputs(inputs64);
  const Tensor y32 = op(t.in32), y64 = op(t.in64);
  Generator gen(seed + 99);
  const Tensor up = Tensor::randn(y64.shape(), gen, DType::Float64);
  sum(mul(y32, up.to(DType::Float32))).backward();
  sum(mul(y64, up)).backward();
  Gap gap;
  widen(gap, y32, y64, "output");
  for (std::size_t i = 0; i < t.in64.size(); ++i)
    if (t.in64[i].requires_grad()) widen(gap, t.in32[i].grad(), t.in64[i].grad(), "gradient of input " + std::to_string(i));
  return gap;
}

// The same comparison one order up: the gradient of <gradients, w> with respect to every input, the first gradients
// taken with create_graph (in float32 the fused op then differentiates its definition: its kernel's backward records
// nothing).
Gap compare_second_order(const Op& op, const Inputs& inputs64, std::uint64_t seed) {
  const Twins t = twin_inputs(inputs64);
  Inputs floating32, floating64;
  for (std::size_t i = 0; i < t.in64.size(); ++i)
    if (t.in64[i].requires_grad()) floating32.push_back(t.in32[i]), floating64.push_back(t.in64[i]);
  Generator gen(seed + 7);
  auto second = [&](const Inputs& in, const Inputs& wrt, DType dtype, Generator g) {
    const Tensor y = op(in);
    const Tensor up = Tensor::randn(y.shape(), g, DType::Float64).to(dtype);
    const std::vector<Tensor> first = autograd::grad({y}, wrt, {up}, std::nullopt, /*create_graph=*/true, true);
    Tensor total = Tensor::zeros({}, dtype);
    for (const Tensor& d : first)
      if (d.defined()) total = add(total, sum(mul(d, Tensor::randn(d.shape(), g, DType::Float64).to(dtype))));
    return autograd::grad({total}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);
  };
  const std::vector<Tensor> got = second(t.in32, floating32, DType::Float32, gen),
                            want = second(t.in64, floating64, DType::Float64, gen);
  Gap gap;
  for (std::size_t i = 0; i < want.size(); ++i) widen(gap, got[i], want[i], "second derivative, input " + std::to_string(i));
  return gap;
}

// Uniform integers in [lo, hi], for shapes.
std::int64_t draw(Generator& gen, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(gen.uniform() * static_cast<double>(hi - lo + 1)) % (hi - lo + 1);
}

Tensor randn(const Shape& s, Generator& gen) { return Tensor::randn(s, gen, DType::Float64); }

// Runs `cases` random draws of one op family and expects every gap within the tolerance.
void expect_kernel_matches(const std::string& name, int cases,
                           const std::function<std::pair<Op, Inputs>(Generator&)>& draw_case) {
  for (int c = 0; c < cases; ++c) {
    Generator gen(1000 + static_cast<std::uint64_t>(c));
    auto [op, inputs] = draw_case(gen);
    const Gap gap = compare_fast_with_definition(op, inputs, static_cast<std::uint64_t>(c));
    EXPECT_LT(gap.worst, kTolerance) << name << " case " << c << ": " << gap.where;
    const Gap second = compare_second_order(op, inputs, static_cast<std::uint64_t>(c));
    EXPECT_LT(second.worst, kTolerance) << name << " case " << c << ": " << second.where;
  }
}

TEST(KernelsMatchDefinitions, LayerNorm) {
  expect_kernel_matches("layer_norm", 12, [](Generator& gen) {
    const std::int64_t D = std::array<std::int64_t, 5>{8, 13, 32, 40, 64}[draw(gen, 0, 4)], N = draw(gen, 1, 21);
    const bool affine = draw(gen, 0, 3) > 0, transposed = draw(gen, 0, 1) == 1;
    Tensor x = add(mul(randn(transposed ? Shape{D, N} : Shape{N, D}, gen), 3.0), 1.5);
    return std::pair<Op, Inputs>{[affine, transposed](const Inputs& in) {
                                   const Tensor x = transposed ? in[0].t() : in[0];
                                   return affine ? layer_norm(x, in[1], in[2]) : layer_norm(x, Tensor(), Tensor());
                                 },
                                 Inputs{x, randn({D}, gen), randn({D}, gen)}};
  });
}

TEST(KernelsMatchDefinitions, LinearAndLinearRelu) {
  expect_kernel_matches("linear", 12, [](Generator& gen) {
    const std::int64_t in = draw(gen, 1, 40), out = draw(gen, 1, 40), B = draw(gen, 1, 4), L = draw(gen, 1, 9);
    const bool relu_after = draw(gen, 0, 1) == 1, with_bias = draw(gen, 0, 3) > 0, w_transposed = draw(gen, 0, 1) == 1;
    Tensor w = randn(w_transposed ? Shape{in, out} : Shape{out, in}, gen);
    return std::pair<Op, Inputs>{[=](const Inputs& x) {
                                   const Tensor weight = w_transposed ? x[1].t() : x[1];
                                   const Tensor bias = with_bias ? x[2] : Tensor();
                                   return relu_after ? linear_relu(x[0], weight, bias) : linear(x[0], weight, bias);
                                 },
                                 Inputs{randn({B, L, in}, gen), w, randn({out}, gen)}};
  });
  // A weight a few columns wide (a LoRA's B) and enough rows for the tiled kernel: its gradient is computed
  // transposed, x^T g (core/kernels/linear.cpp).
  expect_kernel_matches("linear, a narrow weight", 6, [](Generator& gen) {
    const std::int64_t in = draw(gen, 6, 15), out = draw(gen, 16, 48), B = draw(gen, 4, 6), L = draw(gen, 45, 60);
    return std::pair<Op, Inputs>{[](const Inputs& x) { return linear(x[0], x[1], x[2]); },
                                 Inputs{randn({B, L, in}, gen), randn({out, in}, gen), randn({out}, gen)}};
  });
}

// A Linear with its LoRA (nn/lora.h): the adapter reading x itself, or its own input (a LoRA's dropout).
TEST(KernelsMatchDefinitions, LinearLora) {
  expect_kernel_matches("linear_lora", 12, [](Generator& gen) {
    const std::int64_t in = draw(gen, 1, 40), out = draw(gen, 1, 40), r = draw(gen, 1, 6), B = draw(gen, 1, 4),
                       L = draw(gen, 1, 9);
    const bool with_bias = draw(gen, 0, 3) > 0, own_input = draw(gen, 0, 1) == 1;
    const double scaling = 0.25 * static_cast<double>(draw(gen, 1, 16));
    return std::pair<Op, Inputs>{[=](const Inputs& x) {
                                   return linear_lora(x[0], x[1], with_bias ? x[2] : Tensor(), own_input ? x[3] : x[0],
                                                      x[4], x[5], scaling);
                                 },
                                 Inputs{randn({B, L, in}, gen), randn({out, in}, gen), randn({out}, gen),
                                        randn({B, L, in}, gen), randn({r, in}, gen), randn({out, r}, gen)}};
  });
}

TEST(KernelsMatchDefinitions, CrossEntropy) {
  expect_kernel_matches("cross_entropy", 12, [](Generator& gen) {
    const std::int64_t N = draw(gen, 1, 30), C = draw(gen, 2, 40);
    Tensor target = Tensor::randint(0, C, {N}, gen);
    for (std::int64_t i = 0; i < N; i += 4) target.set({i}, -100);  // some rows ignored
    target.set({N - 1}, static_cast<double>(C - 1));                 // and at least one valid row
    return std::pair<Op, Inputs>{[target](const Inputs& in) { return cross_entropy(in[0], target); },
                                 Inputs{mul(randn({N, C}, gen), 4.0)}};
  });
}

TEST(KernelsMatchDefinitions, LinearCrossEntropy) {
  expect_kernel_matches("linear_cross_entropy", 12, [](Generator& gen) {
    const std::int64_t N = draw(gen, 1, 30), in = draw(gen, 1, 20), C = draw(gen, 2, 40);
    Tensor target = Tensor::randint(0, C, {N}, gen);
    for (std::int64_t i = 0; i < N; i += 4) target.set({i}, -100);  // some rows ignored
    target.set({N - 1}, static_cast<double>(C - 1));                 // and at least one valid row
    return std::pair<Op, Inputs>{[target](const Inputs& in) { return linear_cross_entropy(in[0], in[1], target); },
                                 Inputs{randn({N, in}, gen), randn({C, in}, gen)}};
  });
}

TEST(KernelsMatchDefinitions, GeluTanh) {
  // Sizes around the kernel's blocks of 8 (and its scalar tail), values out to |x| = 12, where tanh saturates and
  // the kernel's sigmoid form underflows, and transposed views.
  expect_kernel_matches("gelu_tanh", 12, [](Generator& gen) {
    const std::int64_t rows = draw(gen, 1, 9), n = draw(gen, 1, 70);
    const bool transposed = draw(gen, 0, 1) == 1;
    return std::pair<Op, Inputs>{[transposed](const Inputs& in) { return gelu_tanh(transposed ? in[0].t() : in[0]); },
                                 Inputs{mul(randn({rows, n}, gen), 4.0)}};
  });
  expect_kernel_matches("gelu_tanh tails", 1, [](Generator&) {
    return std::pair<Op, Inputs>{[](const Inputs& in) { return gelu_tanh(in[0]); },
                                 Inputs{Tensor::from_vector({-12.0, -9.0, -6.0, -4.0, -1e-4, 0.0, 1e-4, 4.0, 9.0, 12.0},
                                                            {10}, DType::Float64)}};
  });
}

TEST(KernelsMatchDefinitions, SoftmaxRows) {
  expect_kernel_matches("softmax", 12, [](Generator& gen) {
    const std::int64_t rows = draw(gen, 1, 9), n = draw(gen, 1, 70);
    Tensor mask = Tensor::zeros({rows, n}, DType::Bool);
    for (std::int64_t j = 0; j + 1 < n; j += 3) mask.set({0, j}, 1);  // masked entries (-inf), never a whole row
    return std::pair<Op, Inputs>{[mask](const Inputs& in) {
                                   return softmax(masked_fill(in[0], mask, -std::numeric_limits<double>::infinity()), -1);
                                 },
                                 Inputs{mul(randn({rows, n}, gen), 5.0)}};
  });
}

// Where the sizes of random heads are drawn from: Lq in [q_lo, q_hi], Lk in [k_lo, k_hi], dk and dv in [d_lo, d_hi].
struct HeadSizes {
  std::int64_t q_lo, q_hi, k_lo, k_hi, d_lo, d_hi;
};

// Random heads with masks, read as views of [B, L, H * d].
std::pair<Op, Inputs> random_attention(Generator& gen, const HeadSizes& r) {
  const std::int64_t B = draw(gen, 1, 3), H = draw(gen, 1, 3), Lq = draw(gen, r.q_lo, r.q_hi),
                     Lk = draw(gen, r.k_lo, r.k_hi), dk = draw(gen, r.d_lo, r.d_hi), dv = draw(gen, r.d_lo, r.d_hi);
  // none, causal-like [Lq, Lk], key padding [B, 1, 1, Lk], random holes [Lq, Lk] (every head's, as the causal one:
  // the kernels skip what neither reaches) with the last key blocked for all and every third row keyless
  const std::int64_t mask_kind = draw(gen, 0, 3);
  Tensor mask;
  if (mask_kind == 1) {
    mask = Tensor::zeros({Lq, Lk}, DType::Bool);
    for (std::int64_t i = 0; i < Lq; ++i)
      for (std::int64_t j = 0; j <= std::min(i, Lk - 1); ++j) mask.set({i, j}, 1);
  } else if (mask_kind == 3) {
    mask = Tensor::zeros({Lq, Lk}, DType::Bool);
    for (std::int64_t i = 0; i < Lq; ++i)
      for (std::int64_t j = 0; j + 1 < Lk; ++j) mask.set({i, j}, i % 3 != 2 && gen.uniform() < 0.6 ? 1 : 0);
  } else if (mask_kind == 2) {
    mask = Tensor::ones({B, 1, 1, Lk}, DType::Bool);
    for (std::int64_t j = Lk / 2 + 1; j < Lk; ++j) mask.set({0, 0, 0, j}, 0);
  }
  // q, k, v as heads split from [B, L, H * d] (strided views, as MultiHeadAttention makes them)
  auto heads = [B, H](const Tensor& x, std::int64_t L, std::int64_t d) {
    return x.view({B, L, H, d}).transpose(1, 2);
  };
  return std::pair<Op, Inputs>{[=](const Inputs& in) {
                                 return fused_attention(heads(in[0], Lq, dk), heads(in[1], Lk, dk), heads(in[2], Lk, dv),
                                                        mask).output;
                               },
                               Inputs{randn({B, Lq, H * dk}, gen), randn({B, Lk, H * dk}, gen),
                                      randn({B, Lk, H * dv}, gen)}};
}

TEST(KernelsMatchDefinitions, AttentionWithMasksAndHeadViews) {
  expect_kernel_matches("fused_attention", 16, [](Generator& gen) { return random_attention(gen, {1, 9, 1, 11, 1, 12}); });
}

TEST(KernelsMatchDefinitions, AttentionWithLargeHeadsOnTheGemm) {
  // From 16 queries and 32 keys and dims on, a head's products take the tiled GEMM (core/kernels/attention.cpp):
  // random sizes there, and the large model's heads (64 x 64 x 32).
  expect_kernel_matches("fused_attention", 5, [](Generator& gen) { return random_attention(gen, {16, 40, 32, 48, 32, 48}); });
  expect_kernel_matches("fused_attention", 1, [](Generator& gen) { return random_attention(gen, {64, 64, 64, 64, 32, 32}); });
}

TEST(KernelsMatchDefinitions, AttentionOnStackedHeads) {
  // q, k and v as one fused projection's heads, GPT-2's layout: [B, L, 3 H d] viewed as [B, L, 3, H, d] and permuted
  // to [3, B, H, L, d]; causal or no mask, on the 8-lane products and the GEMM.
  expect_kernel_matches("fused_attention_stacked", 8, [](Generator& gen) {
    const bool large = draw(gen, 0, 3) == 0, causal = draw(gen, 0, 2) > 0;
    const std::int64_t B = draw(gen, 1, 3), H = draw(gen, 1, 3), L = large ? draw(gen, 32, 40) : draw(gen, 1, 13),
                       d = large ? 32 : draw(gen, 1, 12);
    Tensor mask;
    if (causal) {
      mask = Tensor::zeros({L, L}, DType::Bool);
      for (std::int64_t i = 0; i < L; ++i)
        for (std::int64_t j = 0; j <= i; ++j) mask.set({i, j}, 1);
    }
    return std::pair<Op, Inputs>{[=](const Inputs& in) {
                                   const Tensor qkv = in[0].view({B, L, 3, H, d}).permute({2, 0, 3, 1, 4});
                                   return fused_attention_stacked(qkv, mask).output;
                                 },
                                 Inputs{randn({B, L, 3 * H * d}, gen)}};
  });
}

TEST(KernelsMatchDefinitions, AttentionOneQueryGroupsOfEightHeads) {
  // A decoding step: one query per head, dk = dv = 8, at least 8 heads, so the grouped kernel runs.
  expect_kernel_matches("fused_attention one query", 6, [](Generator& gen) {
    const std::int64_t heads = 8 * draw(gen, 1, 3) + draw(gen, 0, 3), Lk = draw(gen, 1, 20);
    return std::pair<Op, Inputs>{[](const Inputs& in) { return fused_attention(in[0], in[1], in[2]).output; },
                                 Inputs{randn({heads, 1, 8}, gen), randn({heads, Lk, 8}, gen), randn({heads, Lk, 8}, gen)}};
  });
}

TEST(KernelsMatchDefinitions, MatmulGemmWithBroadcastAndViews) {
  expect_kernel_matches("matmul", 12, [](Generator& gen) {
    const std::int64_t M = draw(gen, 1, 40), K = draw(gen, 1, 40), N = draw(gen, 1, 40), batch = draw(gen, 1, 3);
    const bool a_transposed = draw(gen, 0, 1) == 1, b_broadcast = draw(gen, 0, 1) == 1;
    Tensor a = randn(a_transposed ? Shape{batch, K, M} : Shape{batch, M, K}, gen);
    Tensor b = randn(b_broadcast ? Shape{K, N} : Shape{batch, K, N}, gen);
    return std::pair<Op, Inputs>{[a_transposed](const Inputs& in) {
                                   return matmul(a_transposed ? in[0].transpose(-2, -1) : in[0], in[1]);
                                 },
                                 Inputs{a, b}};
  });
}

// ------------------------------------------------------------------------------------------- packed weights kept
// Inside a ReusePackedWeights scope (core/kernels/packed_weights.h) the tiled GEMM keeps a weight's packed panels and
// the next product with the same weight reads them: two shards of a step through one linear layer.

TEST(KernelsMatchDefinitions, LinearTwiceInsideAPackedWeightsScope) {
  // Wide enough for the tiled GEMM (forward packs W^T; backward's dx = g W packs W when in > 128 floats), with
  // partial panels and several column blocks of W^T (out > 256); the second product reads what the first packed.
  const kernels::ReusePackedWeights scope;
  expect_kernel_matches("linear, weight kept", 4, [](Generator& gen) {
    const std::int64_t in = draw(gen, 129, 200), out = draw(gen, 100, 300), rows = draw(gen, 6, 40);
    const bool relu_after = draw(gen, 0, 1) == 1;
    return std::pair<Op, Inputs>{[=](const Inputs& x) {  // two shards' rows through the same layer, summed
                                   auto layer = [&](const Tensor& rows_in) {
                                     return relu_after ? linear_relu(rows_in, x[2], x[3]) : linear(rows_in, x[2], x[3]);
                                   };
                                   return add(layer(x[0]), layer(x[1]));
                                 },
                                 Inputs{randn({rows, in}, gen), randn({rows, in}, gen), randn({out, in}, gen),
                                        randn({out}, gen)}};
  });
  EXPECT_GT(scope.store().reused(), 0) << "no product read a kept packing: the test does not reach the reuse path";
}

TEST(KernelsMatchDefinitions, GemmReadingKeptPanelsIsTheSameBits) {
  // On every path the CPU runs: several column and k blocks, partial panels, B transposed (a weight read as W^T) and
  // row-major with rows over 128 floats apart (packed): the first product packs into the scope's buffer, the second
  // reads it; both equal, bit for bit, the product without a scope, and the reference within float rounding.
  std::vector<kernels::SimdLevel> levels{kernels::SimdLevel::Avx2};
  if (kernels::cpu_has_avx512()) levels.push_back(kernels::SimdLevel::Avx512);
  Generator gen(77);
  for (const kernels::SimdLevel level : levels)
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{37, 70, 300}, {20, 600, 520}, {64, 129, 40}})
      for (const bool b_transposed : {false, true}) {
        const Tensor a = Tensor::randn({M, K}, gen);
        const std::int64_t ld = b_transposed ? K : N + 131;  // row-major: rows wider than N, over 128 floats apart
        const Tensor b = Tensor::randn(b_transposed ? Shape{N, K} : Shape{K, ld}, gen);
        const kernels::MatrixRef<float> A{a.data<float>(), K, 1};
        const kernels::MatrixRef<float> B{b.data<float>(), b_transposed ? 1 : ld, b_transposed ? K : 1};
        std::vector<float> plain(static_cast<std::size_t>(M * N)), first(plain.size()), second(plain.size()),
            ref(plain.size());
        kernels::gemm_at_level(level, M, N, K, A, B, plain.data());
        const kernels::ReusePackedWeights scope;
        kernels::gemm_at_level(level, M, N, K, A, B, first.data(), &b.impl().storage);
        kernels::gemm_at_level(level, M, N, K, A, B, second.data(), &b.impl().storage);
        EXPECT_EQ(scope.store().packed(), 1) << kernels::simd_level_name(level) << " M=" << M << " N=" << N;
        EXPECT_EQ(scope.store().reused(), 1) << kernels::simd_level_name(level) << " M=" << M << " N=" << N;
        kernels::gemm_reference<float>(M, N, K, A, B, ref.data());
        for (std::size_t i = 0; i < ref.size(); ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(first[i]), std::bit_cast<std::uint32_t>(plain[i])) << i;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(second[i]), std::bit_cast<std::uint32_t>(plain[i])) << i;
          ASSERT_NEAR(second[i], ref[i], 1e-4 * std::sqrt(static_cast<double>(K)) * (1 + std::abs(ref[i])))
              << kernels::simd_level_name(level) << " M=" << M << " N=" << N << " K=" << K << " at " << i;
        }
      }
}

TEST(KernelsMatchDefinitions, AWeightChangedInPlaceInsideTheScopeIsPackedAgain) {
  Generator gen(78);
  const Tensor x = Tensor::randn({30, 150}, gen), w = Tensor::randn({40, 150}, gen), other = Tensor::randn({40, 150}, gen);
  const Tensor want_before = linear(x, w, Tensor()), want_after = linear(x, other, Tensor());  // no scope
  const kernels::ReusePackedWeights scope;
  test::expect_all_close(linear(x, w, Tensor()), want_before, 0);
  w.copy_(other);  // an in-place change: the storage's version moves on, the kept panels are stale
  test::expect_all_close(linear(x, w, Tensor()), want_after, 0);
  EXPECT_EQ(scope.store().packed(), 2);

  // A write through the raw pointer, as an optimizer's: mutable_data<T>() moves the version on too.
  const Tensor third = Tensor::randn({40, 150}, gen);
  std::copy_n(third.data<float>(), third.numel(), w.mutable_data<float>());
  test::expect_all_close(linear(x, w, Tensor()), linear(x, third, Tensor()), 0);
  EXPECT_EQ(scope.store().packed(), 4) << "w after the write, and third";

  // Planted wrong: a change written where the version cannot see it (a const pointer's constness cast away, which
  // nothing in the library does). The kept panels are then stale and the product is the old weight's: the
  // comparisons above would catch a cache that missed a change.
  const Tensor fourth = Tensor::randn({40, 150}, gen);
  std::copy_n(fourth.data<float>(), fourth.numel(), const_cast<float*>(w.data<float>()));
  const Tensor stale = linear(x, w, Tensor());
  test::expect_all_close(stale, linear(x, third, Tensor()), 0);
  double gap = 0;
  const auto got = stale.to_vector<float>(), fresh = linear(x, fourth, Tensor()).to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) gap = std::max(gap, static_cast<double>(std::abs(got[i] - fresh[i])));
  EXPECT_GT(gap, 0.1) << "the stale product must differ from the changed weight's";
}

TEST(KernelsMatchDefinitions, AnAdamWStepInsideTheScopeIsSeenByTheNextProduct) {
  // AdamW writes the weight through its raw pointer (optim/adam.cpp), not through an in-place method: that write
  // must move the storage's version on too, or the next product reads the panels packed before the step.
  Generator gen(79);
  const Tensor x = Tensor::randn({30, 150}, gen);
  Tensor w = Tensor::randn({40, 150}, gen);
  w.set_requires_grad();
  const kernels::ReusePackedWeights scope;
  const NoGradGuard no_grad;  // products only: no graph
  const Tensor before = linear(x, w, Tensor());  // packs w
  w.set_grad(Tensor::randn({40, 150}, gen));
  optim::Adam adamw({{"w", w}}, {.lr = 0.1, .weight_decay = 0.1, .decoupled_weight_decay = true});
  adamw.step();
  const Tensor after = linear(x, w, Tensor());
  test::expect_all_close(after, linear(x, w.clone(), Tensor()), 0);  // a fresh storage: packed from the new values
  EXPECT_EQ(scope.store().packed(), 3) << "w before the step, w after it, and the clone";
  EXPECT_EQ(scope.store().reused(), 0);
  // The step moved the weight far enough for the products to differ: the comparison above is not vacuous.
  double gap = 0;
  const auto a = after.to_vector<float>(), b = before.to_vector<float>();
  for (std::size_t i = 0; i < a.size(); ++i) gap = std::max(gap, static_cast<double>(std::abs(a[i] - b[i])));
  EXPECT_GT(gap, 0.1);
}

TEST(KernelsMatchDefinitions, TheComparisonCatchesAWrongKernel) {
  // A float32 "kernel" that is off by one part in a thousand (layer_norm with the wrong eps) must be caught.
  Generator gen(5);
  const Op wrong = [](const Inputs& in) {
    return in[0].dtype() == DType::Float32 ? layer_norm(in[0], Tensor(), Tensor(), 1e-3) : layer_norm(in[0], Tensor(), Tensor());
  };
  const Gap gap = compare_fast_with_definition(wrong, Inputs{mul(randn({4, 16}, gen), 0.1)}, 0);
  EXPECT_GT(gap.worst, 100 * kTolerance) << gap.where;
}

}  // namespace
}  // namespace cppgrad
