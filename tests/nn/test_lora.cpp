// LoRA (nn/lora.h): an adapted Linear starts as its base, trains only A and B, skips the frozen weight's gradient
// product, merges back into a plain Linear with the same outputs, and refuses bad options with a message.
#include "core/autograd.h"
#include "core/kernels/product_count.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "nn/gpt.h"
#include "nn/linear.h"
#include "nn/lora.h"
#include "nn_test_util.h"

namespace cppgrad {
namespace {

using namespace nn;
using test::max_abs_diff;

Tensor random_input(const Shape& shape, std::uint64_t seed, bool requires_grad = true) {
  Generator gen(seed);
  Tensor x = Tensor::randn(shape, gen);
  if (requires_grad) x.set_requires_grad();
  return x;
}

// B drawn away from its zero start, as training would leave it.
void randomize_b(const Linear& lin, std::uint64_t seed) {
  Generator gen(seed);
  lin.lora()->B().set_data(Tensor::randn(lin.lora()->B().shape(), gen));
}

TEST(LoRA, StartsAsTheBaseLayerBitForBit) {
  Generator g1(7), g2(7), adapter(8);
  Linear base({.in = 24, .out = 16}, g1), adapted({.in = 24, .out = 16}, g2);
  adapted.add_lora({.rank = 4}, adapter);
  const Tensor x = random_input({3, 5, 24}, 1, false);
  EXPECT_EQ(adapted.forward(x).to_vector<float>(), base.forward(x).to_vector<float>());
}

TEST(LoRA, NamesItsParametersAndTrainsOnlyThem) {
  Generator gen(1);
  Linear lin({.in = 6, .out = 5}, gen);
  lin.add_lora({.rank = 2}, gen);
  std::vector<std::string> all, trainable;
  for (const auto& [name, p] : lin.named_parameters()) all.push_back(name + " " + shape_str(p.shape()));
  for (const auto& [name, p] : lin.named_trainable_parameters()) trainable.push_back(name);
  EXPECT_EQ(all, (std::vector<std::string>{"weight [5, 6]", "bias [5]", "lora.A [2, 6]", "lora.B [5, 2]"}));
  EXPECT_EQ(trainable, (std::vector<std::string>{"lora.A", "lora.B"}));
  EXPECT_DOUBLE_EQ(lin.lora()->scaling(), 4.0);  // alpha 8 (peft's default) over rank 2
  EXPECT_EQ(lin.lora()->B().to_vector<float>(), std::vector<float>(10, 0.0f));
  const double bound = 1.0 / std::sqrt(6.0);  // A: U(-1/sqrt(in), 1/sqrt(in)), as peft's kaiming_uniform_(a=sqrt(5))
  for (const float a : lin.lora()->A().to_vector<float>()) EXPECT_LE(std::abs(a), bound);
}

// The products one forward and backward of a [rows, in] -> [rows, out] layer runs, counted by the GEMM itself.
kernels::ProductCount products_of_a_step(const Linear& lin, std::int64_t rows) {
  const Tensor x = random_input({rows, 64}, 3);
  kernels::CountProducts count;
  sum(lin.forward(x)).backward();
  return count.count();
}

TEST(LoRA, AFrozenWeightGetsNoGradientAndNoProduct) {
  const std::int64_t rows = 32, in = 64, out = 48, r = 4;
  Generator gen(2);
  Linear trained({.in = in, .out = out}, gen), adapted({.in = in, .out = out}, gen);
  adapted.add_lora({.rank = r}, gen);
  randomize_b(adapted, 4);

  // Trained in full: forward, the input's gradient, and the weight's gradient: three products of rows x in x out.
  const kernels::ProductCount full = products_of_a_step(trained, rows);
  EXPECT_EQ(full.products, 3);
  EXPECT_EQ(full.multiply_adds, 3 * rows * in * out);
  EXPECT_TRUE(trained.weight().grad().defined());

  // Adapted: the base's forward and input gradient only, plus the adapter's two products forward and four backward,
  // each rows x r x (in or out). No rows x in x out weight-gradient product is run.
  const kernels::ProductCount lora = products_of_a_step(adapted, rows);
  EXPECT_EQ(lora.products, 2 + 6);
  EXPECT_EQ(lora.multiply_adds, 2 * rows * in * out + 3 * rows * r * (in + out));
  EXPECT_FALSE(adapted.weight().grad().defined());
  EXPECT_FALSE(adapted.bias().grad().defined());
  EXPECT_TRUE(adapted.lora()->A().grad().defined());
  EXPECT_TRUE(adapted.lora()->B().grad().defined());
}

TEST(LoRA, GradientsAreTheComposedOps) {
  // The adapter by hand, (x A^T B^T) * s + base, against the module: the same values and gradients.
  Generator gen(5);
  Linear lin({.in = 10, .out = 7}, gen);
  lin.add_lora({.rank = 3, .alpha = 6.0}, gen);
  randomize_b(lin, 6);
  const Tensor x = random_input({4, 10}, 7);
  const Tensor g = random_input({4, 7}, 8, false);
  sum(lin.forward(x) * g).backward();
  const Tensor a = lin.lora()->A().detach().set_requires_grad(), b = lin.lora()->B().detach().set_requires_grad();
  const Tensor x2 = x.detach().set_requires_grad();
  const Tensor y = matmul(x2, lin.weight().t()) + lin.bias() + matmul(matmul(x2, a.t()), b.t()) * 2.0;
  sum(y * g).backward();
  EXPECT_LT(max_abs_diff(lin.lora()->A().grad(), a.grad()), 1e-5);
  EXPECT_LT(max_abs_diff(lin.lora()->B().grad(), b.grad()), 1e-5);
  EXPECT_LT(max_abs_diff(x.grad(), x2.grad()), 1e-5);
}

TEST(LoRA, MergesIntoAPlainLinearWithTheSameOutputs) {
  Generator gen(9), again(9), adapter(10);
  Linear adapted({.in = 32, .out = 24}, gen), plain({.in = 32, .out = 24}, again);
  adapted.add_lora({.rank = 4, .alpha = 16.0}, adapter);
  randomize_b(adapted, 11);
  const Tensor x = random_input({6, 32}, 12, false);
  const Tensor before = plain.forward(x);
  plain.load_state_dict(merged_state_dict(adapted));
  const Tensor merged = plain.forward(x), with_adapter = adapted.forward(x);
  EXPECT_LT(max_abs_diff(merged, with_adapter), 1e-5);
  EXPECT_GT(max_abs_diff(before, with_adapter), 0.1);  // the change is not too small to tell apart
  EXPECT_EQ(adapted.state_dict().size(), 4u);          // merging left the adapted layer as it was
}

TEST(LoRA, RefusesBadOptionsNamingThem) {
  Generator gen(1);
  auto lin = [&] { return Linear({.in = 6, .out = 4}, gen); };
  EXPECT_THROW_MSG(lin().add_lora({.rank = 0}, gen), std::invalid_argument,
                   "LoRA: the rank must be between 1 and min(in, out) = 4 for a Linear [out=4, in=6], got 0");
  EXPECT_THROW_MSG(lin().add_lora({.rank = 5}, gen), std::invalid_argument, "min(in, out) = 4");
  EXPECT_THROW_MSG(lin().add_lora({.rank = 2, .alpha = 0}, gen), std::invalid_argument,
                   "LoRA: alpha must be a positive number, got 0");
  EXPECT_THROW_MSG(lin().add_lora({.rank = 2, .alpha = std::nan("")}, gen), std::invalid_argument, "alpha");
  EXPECT_THROW_MSG(lin().add_lora({.rank = 2, .dropout = 1.0}, gen), std::invalid_argument,
                   "LoRA: dropout must be in [0, 1), got 1");
  EXPECT_THROW_MSG(lin().add_lora({.rank = 2, .dropout = 0.1}, gen), std::invalid_argument,
                   "dropout > 0 needs the model's dropout generator");
  Linear twice = lin();
  twice.add_lora({.rank = 2}, gen);
  EXPECT_THROW_MSG(twice.add_lora({.rank = 2}, gen), std::invalid_argument, "has a LoRA already");
  Linear tied({.in = 6, .out = 4, .bias = false}, lin().weight());
  EXPECT_THROW_MSG(tied.add_lora({.rank = 2}, gen), std::invalid_argument, "tied weight cannot take a LoRA");
}

TEST(LoRA, DropoutActsOnTheAdapterOnlyAndNotInEval) {
  Generator gen(3);
  Linear lin({.in = 16, .out = 16}, gen);
  lin.add_lora({.rank = 4, .dropout = 0.5}, gen, std::make_shared<Generator>(4));
  randomize_b(lin, 5);
  const Tensor x = random_input({8, 16}, 6, false);
  const Tensor train_a = lin.forward(x), train_b = lin.forward(x);
  EXPECT_GT(max_abs_diff(train_a, train_b), 0.0);  // two masks
  lin.eval();
  Linear plain({.in = 16, .out = 16}, gen);
  plain.load_state_dict(merged_state_dict(lin));
  EXPECT_LT(max_abs_diff(lin.forward(x), plain.forward(x)), 1e-5);  // no mask in eval: the merged layer's outputs
}

GPTConfig tiny_gpt() { return {.block_size = 8, .vocab_size = 32, .n_layer = 2, .n_head = 2, .n_embd = 16}; }
const std::vector<std::string> kGpt2Targets{"c_attn", "attn.c_proj", "c_fc", "mlp.c_proj"};

struct GptStep {
  kernels::ProductCount count;
  float loss;
};
GptStep gpt_step(const GPT& gpt) {
  const Tensor idx = test::random_ids({2, 8}, 0, 32, 1), targets = test::random_ids({2, 8}, 0, 32, 2);
  kernels::CountProducts count;
  const Tensor loss = gpt.forward(idx, targets).loss;
  loss.backward();
  return {count.count(), loss.item<float>()};
}

TEST(LoRA, AdaptsAGptsFourMatricesAndStartsAsIt) {
  Generator g1(1), g2(1), adapter(2);
  GPT full(tiny_gpt(), g1), adapted(tiny_gpt(), g2);
  const std::vector<std::string> names = add_lora(adapted, kGpt2Targets, {.rank = 4}, adapter);
  EXPECT_EQ(names, (std::vector<std::string>{"transformer.h.0.attn.c_attn", "transformer.h.0.attn.c_proj",
                                             "transformer.h.0.mlp.c_fc", "transformer.h.0.mlp.c_proj",
                                             "transformer.h.1.attn.c_attn", "transformer.h.1.attn.c_proj",
                                             "transformer.h.1.mlp.c_fc", "transformer.h.1.mlp.c_proj"}));
  std::int64_t trainable = 0;
  for (const auto& [name, p] : adapted.named_trainable_parameters()) {
    EXPECT_NE(name.find(".lora."), std::string::npos) << name;
    trainable += p.numel();
  }
  const std::int64_t C = 16, r = 4;  // r (in + out) a matrix: c_attn C + 3C, c_proj 2C, c_fc and mlp.c_proj 5C
  EXPECT_EQ(trainable, 2 * r * (4 * C + 2 * C + 5 * C + 5 * C));

  const GptStep f = gpt_step(full), a = gpt_step(adapted);
  EXPECT_EQ(a.loss, f.loss);  // B = 0: the base model's loss, bit for bit
  for (const auto& [name, p] : adapted.named_parameters())
    EXPECT_EQ(p.grad().defined(), name.find(".lora.") != std::string::npos) << name;
  // No weight-gradient product for a frozen matrix: the full step's products, less those of the adapted matrices
  // (rows x in x out each: 12 C^2 a block) and of the tied lm_head (rows x C x V), plus at most the adapters' own
  // (3 rows x r x (in + out) each), bound the adapted step's. A weight-gradient product run anyway would break it.
  const std::int64_t rows = 2 * 8, V = 32;
  const std::int64_t skipped = 2 * 12 * rows * C * C + rows * C * V;
  const std::int64_t adapters = 2 * 3 * rows * r * (4 * C + 2 * C + 5 * C + 5 * C);
  EXPECT_LE(a.count.multiply_adds, f.count.multiply_adds - skipped + adapters);
  EXPECT_LT(a.count.multiply_adds, f.count.multiply_adds);
}

TEST(LoRA, RefusesTargetsAndRanksTheModelCannotTakeAndLeavesItAsItWas) {
  Generator gen(1);
  GPT gpt(tiny_gpt(), gen);
  EXPECT_THROW_MSG(add_lora(gpt, {"c_attn", "q_proj"}, {.rank = 4}, gen), std::invalid_argument,
                   "LoRA: the target 'q_proj' names no Linear of this model; its Linear layers: "
                   "transformer.h.0.attn.c_attn, transformer.h.0.attn.c_proj, transformer.h.0.mlp.c_fc,");
  EXPECT_THROW_MSG(add_lora(gpt, {"h.0.attn"}, {.rank = 4}, gen), std::invalid_argument, "'h.0.attn' names no Linear");
  EXPECT_THROW_MSG(add_lora(gpt, {}, {.rank = 4}, gen), std::invalid_argument, "LoRA: no target layers given");
  EXPECT_THROW_MSG(add_lora(gpt, {"c_fc"}, {.rank = 17}, gen), std::invalid_argument,
                   "min(in, out) = 16 for a Linear [out=64, in=16], got 17 (transformer.h.0.mlp.c_fc)");
  EXPECT_EQ(gpt.named_trainable_parameters().size(), gpt.named_parameters().size());  // nothing frozen
  EXPECT_EQ(add_lora(gpt, {"transformer.h.1.mlp.c_fc"}, {.rank = 2}, gen).size(), 1u);  // a full name: one layer
  EXPECT_THROW_MSG(add_lora(gpt, {"c_fc"}, {.rank = 2}, gen), std::invalid_argument,
                   "LoRA: transformer.h.1.mlp.c_fc has a LoRA already");
}

}  // namespace
}  // namespace cppgrad
