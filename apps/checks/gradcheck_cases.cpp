// The gradient-check cases of every op and module, in one registry: the unit tests (GradCheck.<name>) and
// cppgrad-gradcheck both run these, so adding an op's check is adding one entry here.
#include "checks/gradcheck_cases.h"

#include <cmath>
#include <memory>

#include "core/ops.h"
#include "nn/additive_attention.h"
#include "nn/attention.h"
#include "nn/embedding.h"
#include "nn/feed_forward.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/multi_head_attention.h"
#include "nn/multiplicative_attention.h"
#include "nn/self_attention.h"
#include "nn/seq2seq.h"
#include "nn/transformer.h"

namespace cppgrad::checks {

// A float64 leaf with values uniform in [lo, hi), requiring grad.
Tensor leaf(const Shape& shape, std::uint64_t seed, double lo, double hi) {
  Generator gen(seed);
  Tensor t = add(mul(Tensor::rand(shape, gen, DType::Float64), hi - lo), lo);
  t.set_requires_grad(true);
  return t;
}

// Values whose magnitude is at least `gap` (away from the kinks of relu, max, ...).
Tensor leaf_away_from_zero(const Shape& shape, std::uint64_t seed, double gap) {
  Generator gen(seed);
  Tensor t = Tensor::rand(shape, gen, DType::Float64);
  double* p = t.data<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = (p[i] < 0.5 ? -1.0 : 1.0) * (gap + p[i]);
  t.set_requires_grad(true);
  return t;
}

namespace {

using namespace nn;
using Inputs = std::vector<Tensor>;

// A module checked in float64 with its parameters as extra inputs: the Jacobian covers every parameter too.
template <typename M, typename F>
Prepared module_case(std::shared_ptr<M> module, Inputs inputs, F forward) {
  module->to(DType::Float64);
  for (const Tensor& p : module->parameters()) inputs.push_back(p);
  return Prepared{forward, inputs, module};
}

// [B, 1, 1, Lk] key padding: batch 0 sees all keys, batch 1 only the first `keep`.
Tensor padding_mask(std::int64_t Lk, std::int64_t keep) {
  return key_padding_mask_from_lengths(Tensor::from_vector<std::int64_t>({Lk, keep}, {2}), Lk);
}

// The whole model, end to end through the loss.
Prepared seq2seq_case(CrossAttentionKind cross, PositionalKind positional, std::uint64_t seed) {
  Generator gen(seed);
  auto model = std::make_shared<Seq2SeqTransformer>(Seq2SeqOptions{.src_vocab = 5,
                                                                   .tgt_vocab = 6,
                                                                   .out_vocab = 5,
                                                                   .d_model = 4,
                                                                   .n_heads = 2,
                                                                   .n_encoder_layers = 1,
                                                                   .n_decoder_layers = 1,
                                                                   .d_ff = 6,
                                                                   .max_len = 4,
                                                                   .cross_attention = cross,
                                                                   .positional = positional},
                                                    gen);
  Generator ids(seed);
  Tensor src = Tensor::randint(1, 5, {2, 3}, ids), dec_in = Tensor::randint(1, 6, {2, 3}, ids);
  Tensor tgt = Tensor::randint(0, 5, {2, 3}, ids);
  return module_case(model, Inputs{}, [=](const Inputs&) { return cross_entropy(model->forward(src, dec_in), tgt); });
}

std::vector<GradcheckCase> build() {
  std::vector<GradcheckCase> cases;
  auto check = [&](std::string name, std::string group, std::function<Prepared(std::uint64_t)> prepare) {
    cases.push_back({std::move(name), std::move(group), std::move(prepare)});
  };

  // ------------------------------------------------------------------------------------------- ops
  check("Add", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return add(in[0], in[1]); }, Inputs{leaf({2, 3}, seed + 1), leaf({2, 3}, seed + 2)}};
  });
  check("AddBroadcast", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return add(in[0], in[1]); }, Inputs{leaf({2, 1, 3}, seed + 1), leaf({4, 1}, seed + 2)}};
  });
  check("Sub", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sub(in[0], in[1]); }, Inputs{leaf({2, 3}, seed + 3), leaf({2, 3}, seed + 4)}};
  });
  check("SubBroadcast", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sub(in[0], in[1]); }, Inputs{leaf({3}, seed + 3), leaf({2, 3}, seed + 4)}};
  });
  check("Mul", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0], in[1]); }, Inputs{leaf({2, 3}, seed + 5), leaf({2, 3}, seed + 6)}};
  });
  check("MulBroadcast", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0], in[1]); }, Inputs{leaf({2, 1, 4}, seed + 5), leaf({3, 1}, seed + 6)}};
  });
  check("MulSameTensorTwice", "op", [](std::uint64_t seed) {
    // x * x: both uses must contribute (2x).
    return Prepared{[](const Inputs& in) { return mul(in[0], in[0]); }, Inputs{leaf({4}, seed + 7)}};
  });
  check("Div", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return div(in[0], in[1]); },
                    Inputs{leaf({2, 3}, seed + 7), leaf({2, 3}, seed + 8, 0.5, 2.0)}};
  });
  check("DivBroadcast", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return div(in[0], in[1]); },
                    Inputs{leaf({2, 3}, seed + 7), leaf({1, 3}, seed + 8, 0.5, 2.0)}};
  });
  check("BroadcastMulAdd", "op", [](std::uint64_t seed) {
    // The golden case's expression: a * b + c with three different broadcast shapes.
    return Prepared{[](const Inputs& in) { return add(mul(in[0], in[1]), in[2]); },
                    Inputs{leaf({2, 1, 4}, seed + 1), leaf({3, 1}, seed + 2), leaf({4}, seed + 3)}};
  });
  check("Neg", "op", [](std::uint64_t seed) { return Prepared{[](const Inputs& in) { return neg(in[0]); }, Inputs{leaf({2, 3}, seed + 9)}}; });
  check("AddScalar", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return add(in[0], 2.5); }, Inputs{leaf({5}, seed + 10)}};
  });
  check("MulScalar", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0], -1.5); }, Inputs{leaf({5}, seed + 11)}};
  });
  check("RSubScalar", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sub(3.0, in[0]); }, Inputs{leaf({5}, seed + 12)}};
  });
  check("RDivScalar", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return div(2.0, in[0]); }, Inputs{leaf({5}, seed + 13, 0.5, 2.0)}};
  });
  check("Pow", "op", [](std::uint64_t seed) { return Prepared{[](const Inputs& in) { return pow(in[0], 3.0); }, Inputs{leaf({5}, seed + 14)}}; });
  check("PowFractional", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return pow(in[0], 1.5); }, Inputs{leaf({5}, seed + 15, 0.2, 2.0)}};
  });
  check("Exp", "op", [](std::uint64_t seed) { return Prepared{[](const Inputs& in) { return exp(in[0]); }, Inputs{leaf({2, 3}, seed + 16)}}; });
  check("Log", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return log(in[0]); }, Inputs{leaf({2, 3}, seed + 17, 0.2, 3.0)}};
  });
  check("Sqrt", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sqrt(in[0]); }, Inputs{leaf({2, 3}, seed + 18, 0.2, 3.0)}};
  });
  check("Tanh", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return tanh(in[0]); }, Inputs{leaf({2, 3}, seed + 19, -2, 2)}};
  });
  check("Sigmoid", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sigmoid(in[0]); }, Inputs{leaf({2, 3}, seed + 20, -3, 3)}};
  });
  check("Relu", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return relu(in[0]); }, Inputs{leaf_away_from_zero({2, 4}, seed + 21)}};
  });
  check("Gelu", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return gelu(in[0]); }, Inputs{leaf({2, 4}, seed + 22, -3, 3)}};
  });
  check("SumAll", "op", [](std::uint64_t seed) { return Prepared{[](const Inputs& in) { return sum(in[0]); }, Inputs{leaf({2, 3}, seed + 23)}}; });
  check("SumDims", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sum(in[0], {0, 2}); }, Inputs{leaf({2, 3, 4}, seed + 24)}};
  });
  check("SumKeepdim", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return sum(in[0], {1}, true); }, Inputs{leaf({2, 3, 4}, seed + 25)}};
  });
  check("MeanAll", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mean(in[0]); }, Inputs{leaf({2, 3}, seed + 26)}};
  });
  check("MeanDims", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mean(in[0], {-1}, true); }, Inputs{leaf({2, 3, 4}, seed + 27)}};
  });
  check("Max", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return max(in[0], 1); }, Inputs{leaf({2, 5, 3}, seed + 28)}};
  });
  check("MaxKeepdim", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return max(in[0], -1, true); }, Inputs{leaf({3, 4}, seed + 29)}};
  });
  check("Linear", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return linear(in[0], in[1], in[2]); },
                    Inputs{leaf({2, 3, 4}, seed + 300), leaf({5, 4}, seed + 301), leaf({5}, seed + 302)}};
  });
  check("LinearWithoutBias", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return linear(in[0], in[1]); },
                    Inputs{leaf({3, 4}, seed + 303), leaf({2, 4}, seed + 304)}};
  });
  check("LinearTransposedInputAndWeight", "op", [](std::uint64_t seed) {
    // x and W as transposed views: x is copied to rows, W is read in place through its strides.
    return Prepared{[](const Inputs& in) { return linear(in[0].t(), in[1].t(), in[2]); },
                    Inputs{leaf({4, 3}, seed + 305), leaf({4, 2}, seed + 306), leaf({2}, seed + 307)}};
  });
  check("LinearRelu", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return linear_relu(in[0], in[1], in[2]); },
                    Inputs{leaf({2, 3, 4}, seed + 308), leaf({5, 4}, seed + 309), leaf({5}, seed + 310)}};
  });
  check("LinearReluWithoutBias", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return linear_relu(in[0], in[1]); },
                    Inputs{leaf({3, 4}, seed + 311), leaf({6, 4}, seed + 312)}};
  });
  check("Matmul2D", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{leaf({3, 4}, seed + 30), leaf({4, 2}, seed + 31)}};
  });
  check("MatmulVectorMatrix", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{leaf({4}, seed + 32), leaf({4, 3}, seed + 33)}};
  });
  check("MatmulMatrixVector", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{leaf({3, 4}, seed + 34), leaf({4}, seed + 35)}};
  });
  check("MatmulDot", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{leaf({5}, seed + 36), leaf({5}, seed + 37)}};
  });
  check("MatmulBatched", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); },
                    Inputs{leaf({2, 3, 4}, seed + 38), leaf({2, 4, 2}, seed + 39)}};
  });
  check("MatmulBatchedBroadcast", "op", [](std::uint64_t seed) {
    // (2, 1, 3, 5) @ (2, 5, 4) -> (2, 2, 3, 4): the batch dims broadcast, so b's gradient sums over a's batch.
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); },
                    Inputs{leaf({2, 1, 3, 5}, seed + 40), leaf({2, 5, 4}, seed + 41)}};
  });
  check("MatmulBatchedTimesMatrix", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); },
                    Inputs{leaf({2, 3, 4}, seed + 42), leaf({4, 2}, seed + 43)}};
  });
  check("MatmulTransposedView", "op", [](std::uint64_t seed) {
    // a @ b^T with b^T a non-contiguous view, as attention computes q @ k^T.
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1].transpose(-2, -1)); },
                    Inputs{leaf({2, 3, 6}, seed + 44), leaf({2, 5, 6}, seed + 45)}};
  });
  check("MatmulBothTransposed", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0].t(), in[1].t()); },
                    Inputs{leaf({4, 3}, seed + 46), leaf({2, 4}, seed + 47)}};
  });
  check("MatmulSlicedView", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return matmul(in[0].slice(1, 0, 6, 2), in[1]); },
                    Inputs{leaf({3, 6}, seed + 48), leaf({3, 2}, seed + 49)}};
  });
  check("Softmax", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return softmax(in[0], -1); }, Inputs{leaf({2, 3, 5}, seed + 50, -2, 2)}};
  });
  check("SoftmaxDim0", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return softmax(in[0], 0); }, Inputs{leaf({4, 3}, seed + 51, -2, 2)}};
  });
  check("SoftmaxTransposedInput", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return softmax(in[0].t(), -1); }, Inputs{leaf({4, 3}, seed + 52, -2, 2)}};
  });
  check("SoftmaxWithMaskedEntries", "op", [](std::uint64_t seed) {
    // Some (not all) entries of each row at -inf: those get zero weight and zero gradient.
    Tensor mask = Tensor::from_vector<bool>({false, true, false, true, false, false, false, true}, {2, 4});
    return Prepared{[mask](const Inputs& in) { return softmax(masked_fill(in[0], mask, -INFINITY), -1); },
                    Inputs{leaf({2, 4}, seed + 53)}};
  });
  check("FusedAttention", "op", [](std::uint64_t seed) {
    // Lk = 5 and dv = 3: the kernels' vectors are partly padding.
    return Prepared{[](const Inputs& in) { return fused_attention(in[0], in[1], in[2]).output; },
                    Inputs{leaf({2, 3, 4}, seed + 320), leaf({2, 5, 4}, seed + 321), leaf({2, 5, 3}, seed + 322)}};
  });
  check("FusedAttentionCausalMaskHeadViews", "op", [](std::uint64_t seed) {
    // q, k, v as heads split from [B, L, D] (non-contiguous views, as MultiHeadAttention makes them), causal mask.
    Tensor mask = causal_mask(4);
    auto heads = [](const Tensor& x) { return x.view({2, 4, 2, 3}).transpose(1, 2); };  // [2, 2, 4, 3]
    return Prepared{[=](const Inputs& in) { return fused_attention(heads(in[0]), heads(in[1]), heads(in[2]), mask).output; },
                    Inputs{leaf({2, 4, 6}, seed + 323), leaf({2, 4, 6}, seed + 324), leaf({2, 4, 6}, seed + 325)}};
  });
  check("FusedAttentionKeyPaddingAndABlockedRow", "op", [](std::uint64_t seed) {
    // Key padding per batch item, and one query row with every key blocked (zero output, zero gradient).
    Tensor mask = Tensor::ones({2, 3, 5}, DType::Bool);
    for (std::int64_t j = 3; j < 5; ++j) mask.set({0, 0, j}, 0), mask.set({0, 1, j}, 0), mask.set({0, 2, j}, 0);
    for (std::int64_t j = 0; j < 5; ++j) mask.set({1, 2, j}, 0);
    return Prepared{[mask](const Inputs& in) { return fused_attention(in[0], in[1], in[2], mask).output; },
                    Inputs{leaf({2, 3, 4}, seed + 326), leaf({2, 5, 4}, seed + 327), leaf({2, 5, 2}, seed + 328)}};
  });
  check("LogSoftmax", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return log_softmax(in[0], -1); }, Inputs{leaf({2, 3, 5}, seed + 54, -2, 2)}};
  });
  check("LogSoftmaxDim1", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return log_softmax(in[0], 1); }, Inputs{leaf({2, 4, 3}, seed + 55, -2, 2)}};
  });
  check("CrossEntropy", "op", [](std::uint64_t seed) {
    Tensor target = Tensor::from_vector<std::int64_t>({0, 3, 1, 2}, {4});
    return Prepared{[target](const Inputs& in) { return cross_entropy(in[0], target); },
                    Inputs{leaf({4, 5}, seed + 56, -2, 2)}};
  });
  check("CrossEntropyIgnoreIndex", "op", [](std::uint64_t seed) {
    Tensor target = Tensor::from_vector<std::int64_t>({0, 3, 0, 2, 4, 0}, {2, 3});
    return Prepared{[target](const Inputs& in) { return cross_entropy(in[0], target, /*ignore_index=*/0); },
                    Inputs{leaf({2, 3, 5}, seed + 57, -2, 2)}};
  });
  check("MaskedFill", "op", [](std::uint64_t seed) {
    Tensor mask = Tensor::from_vector<bool>({true, false, false, true}, {1, 4});
    return Prepared{[mask](const Inputs& in) { return masked_fill(in[0], mask, -5.0); }, Inputs{leaf({3, 4}, seed + 58)}};
  });
  check("Where", "op", [](std::uint64_t seed) {
    Tensor cond = Tensor::from_vector<bool>({true, false, true, false, false, true}, {2, 3});
    return Prepared{[cond](const Inputs& in) { return where(cond, in[0], in[1]); },
                    Inputs{leaf({2, 3}, seed + 59), leaf({2, 3}, seed + 60)}};
  });
  check("WhereBroadcast", "op", [](std::uint64_t seed) {
    Tensor cond = Tensor::from_vector<bool>({true, false, true}, {3});
    return Prepared{[cond](const Inputs& in) { return where(cond, in[0], in[1]); },
                    Inputs{leaf({2, 3}, seed + 61), leaf({2, 1}, seed + 62)}};
  });
  check("Cat", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) {
                      return cat({in[0], in[1], in[2]}, 1);
                    },
                    Inputs{leaf({2, 1, 3}, seed + 63), leaf({2, 2, 3}, seed + 64), leaf({2, 3, 3}, seed + 65)}};
  });
  check("CatLastDim", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) {
                      return cat({in[0], in[1]}, -1);
                    },
                    Inputs{leaf({2, 2}, seed + 66), leaf({2, 3}, seed + 67)}};
  });
  check("Stack", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) {
                      return stack({in[0], in[1]}, 1);
                    },
                    Inputs{leaf({2, 3}, seed + 68), leaf({2, 3}, seed + 69)}};
  });
  check("IndexSelect", "op", [](std::uint64_t seed) {
    Tensor idx = Tensor::from_vector<std::int64_t>({2, 0, 2, 1}, {4});  // a repeated index accumulates
    return Prepared{[idx](const Inputs& in) { return index_select(in[0], 1, idx); }, Inputs{leaf({2, 3, 2}, seed + 70)}};
  });
  check("Gather", "op", [](std::uint64_t seed) {
    Tensor idx = Tensor::from_vector<std::int64_t>({0, 2, 2, 1, 0, 0}, {2, 3});
    return Prepared{[idx](const Inputs& in) { return gather(in[0], 1, idx); }, Inputs{leaf({2, 4}, seed + 71)}};
  });
  check("GatherDim0", "op", [](std::uint64_t seed) {
    Tensor idx = Tensor::from_vector<std::int64_t>({1, 0, 1}, {1, 3});
    return Prepared{[idx](const Inputs& in) { return gather(in[0], 0, idx); }, Inputs{leaf({2, 3}, seed + 72)}};
  });
  check("Embedding", "op", [](std::uint64_t seed) {
    Tensor ids = Tensor::from_vector<std::int64_t>({1, 4, 1, 0, 3, 3}, {2, 3});
    return Prepared{[ids](const Inputs& in) { return embedding(in[0], ids); }, Inputs{leaf({5, 3}, seed + 73)}};
  });
  check("LayerNorm", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return layer_norm(in[0], in[1], in[2], 1e-5); },
                    Inputs{leaf({2, 3, 5}, seed + 74, -2, 2), leaf({5}, seed + 75, 0.5, 1.5), leaf({5}, seed + 76)}};
  });
  check("LayerNormWithoutAffine", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return layer_norm(in[0], Tensor(), Tensor(), 1e-5); },
                    Inputs{leaf({3, 4}, seed + 77, -2, 2)}};
  });
  check("LayerNormTransposedInput", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return layer_norm(in[0].t(), in[1], in[2], 1e-5); },
                    Inputs{leaf({4, 3}, seed + 78, -2, 2), leaf({4}, seed + 79, 0.5, 1.5), leaf({4}, seed + 80)}};
  });
  check("Dropout", "op", [](std::uint64_t seed) {
    // A fresh generator with the same seed inside f: every evaluation draws the same mask.
    return Prepared{[seed](const Inputs& in) {
                      Generator gen(seed + 7);
                      return dropout(in[0], 0.4, /*training=*/true, gen);
                    },
                    Inputs{leaf({3, 5}, seed + 81)}};
  });
  check("Transpose", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0].transpose(0, 2), 2.0); }, Inputs{leaf({2, 3, 4}, seed + 82)}};
  });
  check("Permute", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].permute({2, 0, 1})); }, Inputs{leaf({2, 3, 4}, seed + 83)}};
  });
  check("Slice", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].slice(1, 1, 3)); }, Inputs{leaf({2, 4}, seed + 84)}};
  });
  check("SliceWithStep", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].slice(0, 0, 5, 2)); }, Inputs{leaf({5, 2}, seed + 85)}};
  });
  check("Select", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].select(1, 2)); }, Inputs{leaf({2, 3}, seed + 86)}};
  });
  check("Unsqueeze", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0].unsqueeze(1), in[1]); },
                    Inputs{leaf({2, 3}, seed + 87), leaf({2, 2, 3}, seed + 88)}};
  });
  check("Squeeze", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].squeeze(1)); }, Inputs{leaf({2, 1, 3}, seed + 89)}};
  });
  check("Expand", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].expand({4, 2, 3})); }, Inputs{leaf({2, 1}, seed + 90)}};
  });
  check("View", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].view({3, -1})); }, Inputs{leaf({2, 3, 2}, seed + 91)}};
  });
  check("ReshapeNonContiguous", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return exp(in[0].t().reshape({-1})); }, Inputs{leaf({3, 4}, seed + 92)}};
  });
  check("Contiguous", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return in[0].t().contiguous(); }, Inputs{leaf({3, 2}, seed + 93)}};
  });
  check("Clone", "op", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return mul(in[0].clone(), in[0]); }, Inputs{leaf({3}, seed + 94)}};
  });
  check("NonContiguousLeaf", "op", [](std::uint64_t seed) {
    // The leaf itself is a transposed view of its storage: the checker perturbs it through its strides.
    Tensor base = leaf({3, 4}, seed + 95).detach();
    Tensor x = base.t();
    x.set_requires_grad(true);
    return Prepared{[](const Inputs& in) { return matmul(in[0], in[1]); }, Inputs{x, leaf({3, 2}, seed + 96)}};
  });

  // ------------------------------------------------------------------------------------------- modules
  check("LinearModule", "module", [](std::uint64_t seed) {
    Generator gen(seed + 1);
    auto lin = std::make_shared<Linear>(LinearOptions{.in = 3, .out = 4}, gen);
    return module_case(lin, Inputs{leaf({2, 3}, seed + 1)}, [=](const Inputs& in) { return lin->forward(in[0]); });
  });
  check("LinearModuleWithoutBias", "module", [](std::uint64_t seed) {
    Generator gen(seed + 2);
    auto lin = std::make_shared<Linear>(LinearOptions{.in = 3, .out = 2, .bias = false}, gen);
    return module_case(lin, Inputs{leaf({2, 2, 3}, seed + 2)}, [=](const Inputs& in) { return lin->forward(in[0]); });
  });
  check("EmbeddingModule", "module", [](std::uint64_t seed) {
    Generator gen(seed + 3);
    auto emb = std::make_shared<Embedding>(5, 3, gen);
    Tensor ids = Tensor::from_vector<std::int64_t>({0, 4, 4, 2}, {2, 2});
    return module_case(emb, Inputs{}, [=](const Inputs&) { return emb->forward(ids); });
  });
  check("LayerNormModule", "module", [](std::uint64_t seed) {
    auto norm = std::make_shared<LayerNorm>(4);
    return module_case(norm, Inputs{leaf({3, 4}, seed + 4, -2, 2)}, [=](const Inputs& in) { return norm->forward(in[0]); });
  });
  check("FeedForwardRelu", "module", [](std::uint64_t seed) {
    Generator gen(seed + 5);
    auto ffn = std::make_shared<FeedForward>(FeedForwardOptions{.d_model = 3, .d_ff = 5}, gen);
    return module_case(ffn, Inputs{leaf({2, 3}, seed + 5)}, [=](const Inputs& in) { return ffn->forward(in[0]); });
  });
  check("FeedForwardGelu", "module", [](std::uint64_t seed) {
    Generator gen(seed + 6);
    auto ffn =
        std::make_shared<FeedForward>(FeedForwardOptions{.d_model = 3, .d_ff = 4, .activation = Activation::Gelu}, gen);
    return module_case(ffn, Inputs{leaf({2, 3}, seed + 6)}, [=](const Inputs& in) { return ffn->forward(in[0]); });
  });
  check("FeedForwardWithDropoutInTraining", "module", [](std::uint64_t seed) {
    Generator gen(seed + 7);
    auto dgen = std::make_shared<Generator>(0);
    auto ffn = std::make_shared<FeedForward>(FeedForwardOptions{.d_model = 3, .d_ff = 6, .dropout = 0.3}, gen, dgen);
    // Re-seed before each evaluation so every forward draws the same mask.
    return module_case(ffn, Inputs{leaf({2, 3}, seed + 7)}, [=](const Inputs& in) {
      dgen->manual_seed(11);
      return ffn->forward(in[0]);
    });
  });
  check("ScaledDotProductAttention", "module", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2]).output; },
                    Inputs{leaf({2, 3, 4}, seed + 8), leaf({2, 5, 4}, seed + 9), leaf({2, 5, 3}, seed + 10)}};
  });
  check("ScaledDotProductAttentionWeights", "module", [](std::uint64_t seed) {
    return Prepared{[](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2]).weights; },
                    Inputs{leaf({2, 3, 4}, seed + 11), leaf({2, 5, 4}, seed + 12), leaf({2, 5, 3}, seed + 13)}};
  });
  check("ScaledDotProductAttentionCausalMask", "module", [](std::uint64_t seed) {
    Tensor mask = causal_mask(4);
    return Prepared{[mask](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2], mask).output; },
                    Inputs{leaf({2, 2, 4, 3}, seed + 14), leaf({2, 2, 4, 3}, seed + 15), leaf({2, 2, 4, 3}, seed + 16)}};
  });
  check("ScaledDotProductAttentionKeyPadding", "module", [](std::uint64_t seed) {
    Tensor mask = padding_mask(5, 3).squeeze(1);  // [B, 1, Lk]
    return Prepared{[mask](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2], mask).output; },
                    Inputs{leaf({2, 3, 4}, seed + 17), leaf({2, 5, 4}, seed + 18), leaf({2, 5, 2}, seed + 19)}};
  });
  check("SelfAttention", "module", [](std::uint64_t seed) {
    Generator gen(seed + 20);
    auto attn = std::make_shared<SelfAttention>(SelfAttentionOptions{.d_model = 4, .d_k = 3, .d_v = 2}, gen);
    return module_case(attn, Inputs{leaf({2, 3, 4}, seed + 20)},
                       [=](const Inputs& in) { return attn->forward(in[0]).output; });
  });
  check("SelfAttentionMasked", "module", [](std::uint64_t seed) {
    Generator gen(seed + 21);
    auto attn = std::make_shared<SelfAttention>(SelfAttentionOptions{.d_model = 4, .d_k = 3, .d_v = 3}, gen);
    Tensor mask = causal_mask(3);
    return module_case(attn, Inputs{leaf({2, 3, 4}, seed + 21)},
                       [=](const Inputs& in) { return attn->forward(in[0], mask).output; });
  });
  check("CausalSelfAttention", "module", [](std::uint64_t seed) {
    Generator gen(seed + 22);
    auto attn = std::make_shared<CausalSelfAttention>(CausalSelfAttentionOptions{.d_model = 4, .n_heads = 2}, gen);
    return module_case(attn, Inputs{leaf({2, 3, 4}, seed + 22)},
                       [=](const Inputs& in) { return attn->forward(in[0]).output; });
  });
  check("MultiHeadAttentionSelf", "module", [](std::uint64_t seed) {
    Generator gen(seed + 23);
    auto mha = std::make_shared<MultiHeadAttention>(MultiHeadAttentionOptions{.d_model = 4, .n_heads = 2}, gen);
    return module_case(mha, Inputs{leaf({2, 3, 4}, seed + 23)},
                       [=](const Inputs& in) { return mha->forward(in[0], in[0], in[0]).output; });
  });
  check("MultiHeadAttentionCausalSelf", "module", [](std::uint64_t seed) {
    Generator gen(seed + 24);
    auto mha = std::make_shared<MultiHeadAttention>(MultiHeadAttentionOptions{.d_model = 4, .n_heads = 2}, gen);
    Tensor mask = causal_mask(3);
    return module_case(mha, Inputs{leaf({2, 3, 4}, seed + 24)},
                       [=](const Inputs& in) { return mha->forward(in[0], in[0], in[0], mask).output; });
  });
  check("MultiHeadAttentionCrossWithPadding", "module", [](std::uint64_t seed) {
    // Lq = 2 queries against Lk = 4 keys, the second batch's last key padded away.
    Generator gen(seed + 25);
    auto mha = std::make_shared<MultiHeadAttention>(MultiHeadAttentionOptions{.d_model = 4, .n_heads = 2}, gen);
    Tensor mask = padding_mask(4, 3);
    return module_case(mha, Inputs{leaf({2, 2, 4}, seed + 25), leaf({2, 4, 4}, seed + 26)},
                       [=](const Inputs& in) { return mha->forward(in[0], in[1], in[1], mask).output; });
  });
  check("AdditiveAttention", "module", [](std::uint64_t seed) {
    Generator gen(seed + 27);
    auto attn =
        std::make_shared<AdditiveAttention>(AdditiveAttentionOptions{.d_query = 3, .d_key = 4, .d_hidden = 2}, gen);
    return module_case(attn, Inputs{leaf({2, 1, 3}, seed + 27), leaf({2, 4, 4}, seed + 28), leaf({2, 4, 2}, seed + 29)},
                       [=](const Inputs& in) { return attn->attend(in[0], in[1], in[2]).output; });
  });
  check("AdditiveAttentionMaskedSeveralQueries", "module", [](std::uint64_t seed) {
    Generator gen(seed + 30);
    auto attn =
        std::make_shared<AdditiveAttention>(AdditiveAttentionOptions{.d_query = 3, .d_key = 3, .d_hidden = 2}, gen);
    Tensor mask = padding_mask(4, 2);
    return module_case(attn, Inputs{leaf({2, 2, 3}, seed + 30), leaf({2, 4, 3}, seed + 31), leaf({2, 4, 2}, seed + 32)},
                       [=](const Inputs& in) { return attn->attend(in[0], in[1], in[2], mask).output; });
  });
  check("MultiplicativeAttention", "module", [](std::uint64_t seed) {
    Generator gen(seed + 33);
    auto attn =
        std::make_shared<MultiplicativeAttention>(MultiplicativeAttentionOptions{.d_query = 3, .d_key = 4}, gen);
    return module_case(attn, Inputs{leaf({2, 1, 3}, seed + 33), leaf({2, 4, 4}, seed + 34), leaf({2, 4, 2}, seed + 35)},
                       [=](const Inputs& in) { return attn->attend(in[0], in[1], in[2]).output; });
  });
  check("MultiplicativeAttentionMaskedSeveralQueries", "module", [](std::uint64_t seed) {
    Generator gen(seed + 36);
    auto attn =
        std::make_shared<MultiplicativeAttention>(MultiplicativeAttentionOptions{.d_query = 3, .d_key = 3}, gen);
    Tensor mask = padding_mask(4, 2);
    return module_case(attn, Inputs{leaf({2, 3, 3}, seed + 36), leaf({2, 4, 3}, seed + 37), leaf({2, 4, 2}, seed + 38)},
                       [=](const Inputs& in) { return attn->attend(in[0], in[1], in[2], mask).output; });
  });
  check("TransformerEncoderLayer", "module", [](std::uint64_t seed) {
    Generator gen(seed + 39);
    auto layer =
        std::make_shared<TransformerEncoderLayer>(TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 6}, gen);
    return module_case(layer, Inputs{leaf({2, 3, 4}, seed + 39)}, [=](const Inputs& in) { return layer->forward(in[0]); });
  });
  check("TransformerEncoderLayerPreLNWithPadding", "module", [](std::uint64_t seed) {
    Generator gen(seed + 40);
    auto layer = std::make_shared<TransformerEncoderLayer>(
        TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 6, .norm_first = true}, gen);
    Tensor mask = padding_mask(3, 2);
    return module_case(layer, Inputs{leaf({2, 3, 4}, seed + 40)},
                       [=](const Inputs& in) { return layer->forward(in[0], mask); });
  });
  check("TransformerDecoderLayer", "module", [](std::uint64_t seed) {
    Generator gen(seed + 41);
    auto layer =
        std::make_shared<TransformerDecoderLayer>(TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 6}, gen);
    return module_case(layer, Inputs{leaf({2, 3, 4}, seed + 41), leaf({2, 4, 4}, seed + 42)},
                       [=](const Inputs& in) { return layer->forward(in[0], in[1]); });
  });
  check("TransformerDecoderLayerPreLNWithMemoryPadding", "module", [](std::uint64_t seed) {
    Generator gen(seed + 43);
    auto layer = std::make_shared<TransformerDecoderLayer>(
        TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 6, .norm_first = true}, gen);
    Tensor mask = padding_mask(4, 2);
    return module_case(layer, Inputs{leaf({2, 3, 4}, seed + 43), leaf({2, 4, 4}, seed + 44)},
                       [=](const Inputs& in) { return layer->forward(in[0], in[1], Tensor(), mask); });
  });
  check("TransformerDecoderLayerAdditiveCross", "module", [](std::uint64_t seed) {
    Generator gen(seed + 45);
    auto layer = std::make_shared<TransformerDecoderLayer>(
        TransformerLayerOptions{.d_model = 4, .n_heads = 2, .d_ff = 5, .cross_attention = CrossAttentionKind::Additive},
        gen);
    return module_case(layer, Inputs{leaf({2, 2, 4}, seed + 45), leaf({2, 3, 4}, seed + 46)},
                       [=](const Inputs& in) { return layer->forward(in[0], in[1], Tensor(), padding_mask(3, 2)); });
  });
  check("TransformerDecoderLayerMultiplicativeCross", "module", [](std::uint64_t seed) {
    Generator gen(seed + 47);
    auto layer = std::make_shared<TransformerDecoderLayer>(
        TransformerLayerOptions{
            .d_model = 4, .n_heads = 2, .d_ff = 5, .cross_attention = CrossAttentionKind::Multiplicative},
        gen);
    return module_case(layer, Inputs{leaf({2, 2, 4}, seed + 47), leaf({2, 3, 4}, seed + 48)},
                       [=](const Inputs& in) { return layer->forward(in[0], in[1], Tensor(), padding_mask(3, 2)); });
  });

  // ------------------------------------------------------------------------------------------- the whole model
  check("Seq2SeqTransformer", "module",
        [](std::uint64_t seed) { return seq2seq_case(CrossAttentionKind::ScaledDot, PositionalKind::Learned, seed + 50); });
  check("Seq2SeqTransformerAdditive", "module",
        [](std::uint64_t seed) { return seq2seq_case(CrossAttentionKind::Additive, PositionalKind::Learned, seed + 51); });
  check("Seq2SeqTransformerMultiplicative", "module",
        [](std::uint64_t seed) { return seq2seq_case(CrossAttentionKind::Multiplicative, PositionalKind::Sinusoidal, seed + 52); });
  return cases;
}

}  // namespace

const std::vector<GradcheckCase>& gradcheck_cases() {
  static const std::vector<GradcheckCase> cases = build();
  return cases;
}

// square with a deliberately wrong derivative (x instead of 2x): every checker must refuse it.
GradcheckCase broken_case() {
  return {"BrokenSquare", "broken", [](std::uint64_t seed) {
            auto bad_square = [](const Inputs& in) {
              Tensor x = in[0];
              Tensor saved = x.detach();
              return record_op(mul(saved, saved), "bad_square", {x},
                               [saved](const Tensor& g) { return TensorList{mul(g, saved)}; });
            };
            return Prepared{bad_square, Inputs{leaf({3}, seed + 1)}};
          }};
}

std::string describe_inputs(const Prepared& p, std::size_t shown) {
  std::string s;
  for (std::size_t i = 0; i < p.inputs.size() && i < shown; ++i) {
    if (i) s += ' ';
    s += shape_str(p.inputs[i].shape());
  }
  if (p.inputs.size() > shown) s += " +" + std::to_string(p.inputs.size() - shown) + " params";
  return s;
}

}  // namespace cppgrad::checks
