// The GPT (nn/gpt.h): nanoGPT's parameter names and shapes (a contract: checkpoints load into nanoGPT), the tied
// lm_head, GPT-2's init, the padded-batch loss, the fused-qkv attention's two paths, and refusals.
// PyTorch parity of values, gradients and AdamW steps: tests/parity (gpt.safetensors); gradient checks: the
// registry (GPTBlock, GPTPaddedBatch, GPTAttention).
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/kernels/packed_weights.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "nn/gpt.h"
#include "nn_test_util.h"
#include "optim/sgd.h"

namespace cppgrad {
namespace {

using namespace nn;

GPTConfig small_config() { return {.block_size = 5, .vocab_size = 7, .n_layer = 2, .n_head = 2, .n_embd = 8}; }

// nanoGPT's GPT(GPTConfig(block_size=5, vocab_size=7, n_layer=2, n_head=2, n_embd=8, bias=True)).state_dict(), in
// its order (printed by PyTorch from tools/make_golden.py's NanoGPT, which is nanoGPT's module tree).
const std::vector<std::pair<std::string, Shape>>& nanogpt_state_dict() {
  static const std::vector<std::pair<std::string, Shape>> names = {
      {"transformer.wte.weight", {7, 8}},
      {"transformer.wpe.weight", {5, 8}},
      {"transformer.h.0.ln_1.weight", {8}},
      {"transformer.h.0.ln_1.bias", {8}},
      {"transformer.h.0.attn.c_attn.weight", {24, 8}},
      {"transformer.h.0.attn.c_attn.bias", {24}},
      {"transformer.h.0.attn.c_proj.weight", {8, 8}},
      {"transformer.h.0.attn.c_proj.bias", {8}},
      {"transformer.h.0.ln_2.weight", {8}},
      {"transformer.h.0.ln_2.bias", {8}},
      {"transformer.h.0.mlp.c_fc.weight", {32, 8}},
      {"transformer.h.0.mlp.c_fc.bias", {32}},
      {"transformer.h.0.mlp.c_proj.weight", {8, 32}},
      {"transformer.h.0.mlp.c_proj.bias", {8}},
      {"transformer.h.1.ln_1.weight", {8}},
      {"transformer.h.1.ln_1.bias", {8}},
      {"transformer.h.1.attn.c_attn.weight", {24, 8}},
      {"transformer.h.1.attn.c_attn.bias", {24}},
      {"transformer.h.1.attn.c_proj.weight", {8, 8}},
      {"transformer.h.1.attn.c_proj.bias", {8}},
      {"transformer.h.1.ln_2.weight", {8}},
      {"transformer.h.1.ln_2.bias", {8}},
      {"transformer.h.1.mlp.c_fc.weight", {32, 8}},
      {"transformer.h.1.mlp.c_fc.bias", {32}},
      {"transformer.h.1.mlp.c_proj.weight", {8, 32}},
      {"transformer.h.1.mlp.c_proj.bias", {8}},
      {"transformer.ln_f.weight", {8}},
      {"transformer.ln_f.bias", {8}},
      {"lm_head.weight", {7, 8}},
  };
  return names;
}

TEST(GPT, StateDictHasNanoGPTsNamesAndShapes) {
  Generator gen(0);
  GPT model(small_config(), gen);
  const StateDict state = model.state_dict();
  EXPECT_EQ(state.size(), nanogpt_state_dict().size());
  for (const auto& [name, shape] : nanogpt_state_dict()) {
    ASSERT_TRUE(state.count(name)) << name;
    EXPECT_EQ(state.at(name).shape(), shape) << name;
  }
  // named_parameters: nanoGPT's order, the tied weight once (as PyTorch's named_parameters() deduplicates it)
  std::vector<std::string> expected, got;
  for (const auto& [name, _] : nanogpt_state_dict())
    if (name != "lm_head.weight") expected.push_back(name);
  for (const auto& [name, _] : model.named_parameters()) got.push_back(name);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(model.num_parameters(), 1856);  // PyTorch: sum(p.numel() for p in model.parameters())
}

// What `train --init` pins and `export` refuses follows from each row's role: the sizes and dropout of any GPT-2 are
// no change of architecture, and a row that says nothing is architecture (tests/core/test_config_table.cpp).
TEST(GPTConfig, RowsSayWhatTheyAreToTheWeights) {
  std::map<std::string, FieldRole> roles;
  for (const auto& row : gpt_config_table().rows()) roles[row.name] = row.role;
  const std::map<std::string, FieldRole> want = {
      {"n_embd", FieldRole::size},         {"n_head", FieldRole::size},         {"n_layer", FieldRole::size},
      {"block_size", FieldRole::size},     {"vocab_size", FieldRole::size},     {"dropout", FieldRole::training},
      {"dropout_seed", FieldRole::training}};
  for (const auto& [name, role] : want) {
    ASSERT_TRUE(roles.count(name)) << name;
    EXPECT_EQ(roles.at(name), role) << name;
  }
  EXPECT_TRUE(architecture_changes(small_config()).empty());
  GPTConfig c = small_config();
  c.dropout = 0.1, c.dropout_seed = 7;
  EXPECT_TRUE(architecture_changes(c).empty());
}

TEST(GPT, LmHeadIsTheTokenEmbedding) {
  Generator gen(1);
  GPT model(small_config(), gen);
  const StateDict state = model.state_dict();
  const Tensor wte = state.at("transformer.wte.weight"), lm_head = state.at("lm_head.weight");
  {  // an update to one is seen by the other: one storage
    NoGradGuard no_grad;
    wte.copy_(Tensor::full(wte.shape(), 0.25));
  }
  EXPECT_EQ(lm_head.to_vector<float>(), std::vector<float>(7 * 8, 0.25f));
  // one gradient, from both uses: an optimizer step moves lm_head too
  optim::SGD sgd(model.named_parameters(), {.lr = 1.0});
  const Tensor idx = test::random_ids({2, 5}, 0, 7, 3);
  model.forward(idx, idx).loss.backward();
  sgd.step();
  EXPECT_NE(lm_head.to_vector<float>(), std::vector<float>(7 * 8, 0.25f));
  EXPECT_EQ(lm_head.to_vector<float>(), model.state_dict().at("transformer.wte.weight").to_vector<float>());
}

TEST(GPT, StateDictRoundTripsAndRefusesAnUntiedHead) {
  Generator gen(2);
  GPT a(small_config(), gen), b(small_config(), gen);
  b.load_state_dict(a.state_dict());
  const Tensor idx = test::random_ids({2, 5}, 0, 7, 4);
  EXPECT_EQ(b.forward(idx).logits.to_vector<float>(), a.forward(idx).logits.to_vector<float>());

  StateDict untied = a.state_dict();
  untied["lm_head.weight"] = untied["lm_head.weight"].clone() + 1.0;
  EXPECT_THROW_MSG(b.load_state_dict(untied), std::invalid_argument,
                   "entry 'lm_head.weight' is tied to 'transformer.wte.weight' but holds other values");
  StateDict headless = a.state_dict();
  headless.erase("lm_head.weight");
  EXPECT_THROW_MSG(b.load_state_dict(headless), std::invalid_argument, "missing entry 'lm_head.weight'");
}

// Mean and standard deviation of a tensor's values.
std::pair<double, double> moments(const Tensor& t) {
  const std::vector<double> v = t.to_double_vector();
  double mean = 0, sq = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / static_cast<double>(v.size()))};
}

TEST(GPT, InitIsGPT2s) {
  // Weights N(0, 0.02); the residual projections N(0, 0.02 / sqrt(2 n_layer)); biases 0; LayerNorms 1 and 0.
  Generator gen(3);
  const GPTConfig config{.block_size = 64, .vocab_size = 100, .n_layer = 4, .n_head = 4, .n_embd = 64};
  GPT model(config, gen);
  const double residual = 0.02 / std::sqrt(8.0);
  for (const auto& [name, p] : model.named_parameters()) {
    const auto [mean, stddev] = moments(p);
    const bool ln = name.find("ln_") != std::string::npos, bias = name.ends_with(".bias");
    if (ln || bias) {
      EXPECT_EQ(p.to_double_vector(), std::vector<double>(p.numel(), ln && !bias ? 1.0 : 0.0)) << name;
      continue;
    }
    const double expected = name.ends_with("c_proj.weight") ? residual : 0.02;
    EXPECT_NEAR(stddev, expected, 0.1 * expected) << name;  // >= 4096 draws: the estimate is within ~1.1%
    EXPECT_NEAR(mean, 0.0, 0.1 * expected) << name;
  }
}

TEST(GPT, PaddedPositionsAddNothingToTheLoss) {
  // Row 1 is 2 tokens long, then padding (target -1): what the padding reads cannot change the loss, since no
  // counted position sees a later one and the padded targets are not counted.
  Generator gen(4);
  GPT model(small_config(), gen);
  Tensor idx = Tensor::from_vector<std::int64_t>({0, 3, 1, 4, 2, 0, 5, 6, 0, 0}, {2, 5});
  const Tensor targets = Tensor::from_vector<std::int64_t>({3, 1, 4, 2, 0, 5, 6, 0, -1, -1}, {2, 5});
  const double loss = model.forward(idx, targets).loss.item<float>();
  idx.set({1, 3}, 6), idx.set({1, 4}, 2);
  EXPECT_EQ(model.forward(idx, targets).loss.item<float>(), loss);
  // and the loss is the mean over the 8 counted positions (not 10)
  const Tensor logp = log_softmax(model.forward(idx).logits, -1);
  double sum = 0;
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t t = 0; t < 5; ++t)
      if (const std::int64_t y = targets.at({b, t}); y >= 0) sum -= logp.at({b, t, y});
  EXPECT_NEAR(loss, sum / 8, 1e-6);
}

// GPT::loss is forward's loss to the bit, and so are its gradients, with a padded row (-1 targets) and a ragged
// vocabulary (7 classes: the kernels' 8-lane tail).
TEST(GPT, LossIsForwardsLossWithoutTheLogits) {
  Generator gen(4);
  GPT model(small_config(), gen);
  const Tensor idx = Tensor::from_vector<std::int64_t>({0, 3, 1, 4, 2, 0, 5, 6, 0, 0}, {2, 5});
  const Tensor targets = Tensor::from_vector<std::int64_t>({3, 1, 4, 2, 0, 5, 6, 0, -1, -1}, {2, 5});
  const auto gradients = [&](const Tensor& loss) {
    model.zero_grad();
    loss.backward();
    std::vector<std::vector<float>> g;
    for (const Tensor& p : model.parameters()) g.push_back(p.grad().to_vector<float>());
    return g;
  };
  const Tensor loss = model.loss(idx, targets), reference = model.forward(idx, targets).loss;
  EXPECT_EQ(loss.item<float>(), reference.item<float>());
  EXPECT_EQ(loss.grad_fn()->name, "linear_cross_entropy");
  EXPECT_EQ(gradients(loss), gradients(reference));
  EXPECT_THROW_MSG(model.loss(idx, Tensor()), std::invalid_argument, "GPT::loss: needs targets");
  EXPECT_THROW_MSG(model.loss(idx, test::random_ids({2, 4}, 0, 7, 6)), std::invalid_argument,
                   "targets [2, 4] must be shaped like idx [2, 5]");
}

TEST(GPT, AttentionMapsAreCausal) {
  Generator gen(5);
  GPT model(small_config(), gen);
  const std::vector<Tensor> maps = model.attention(test::random_ids({1, 4}, 0, 7, 5));
  ASSERT_EQ(maps.size(), 2u);
  for (const Tensor& w : maps) {
    ASSERT_EQ(w.shape(), (Shape{1, 2, 4, 4}));
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = i + 1; j < 4; ++j) EXPECT_EQ(w.at({0, h, i, j}), 0.0);
  }
}

// Asking for the maps runs the forward forward() runs (the same blocks' output, so the same logits follow) and keeps
// nothing in the model; a scoped eval mode gives the mode back.
TEST(GPT, AttentionIsReturnedWhenAskedAndEvalModeIsScoped) {
  Generator gen(5);
  GPTConfig c = small_config();
  c.dropout = 0.25;
  GPT model(c, gen);
  const Tensor idx = test::random_ids({1, 4}, 0, 7, 5);
  {
    EvalModeGuard eval(model);
    EXPECT_FALSE(model.is_training());
    const std::vector<Tensor> a = model.attention(idx), b = model.attention(idx);
    ASSERT_EQ(a.size(), 2u);
    for (std::size_t l = 0; l < a.size(); ++l) EXPECT_EQ(a[l].to_vector<float>(), b[l].to_vector<float>());
  }
  EXPECT_TRUE(model.is_training()) << "the guard gives back training mode";
  model.eval();
  { EvalModeGuard eval(model); }
  EXPECT_FALSE(model.is_training()) << "and evaluation mode, when that was the mode";
}

TEST(GPT, RefusesMisuseNamingIt) {
  Generator gen(6);
  GPTConfig odd = small_config();
  odd.n_head = 3;
  EXPECT_THROW_MSG(GPT(odd, gen), std::invalid_argument, "n_embd (8) must be a multiple of n_head (3)");
  GPT model(small_config(), gen);
  EXPECT_THROW_MSG(model.forward(test::random_ids({1, 6}, 0, 7, 6)), std::invalid_argument,
                   "cannot read a sequence of length 6, the context (block_size) is 5");
  EXPECT_THROW_MSG(model.forward(test::random_ids({1, 4}, 0, 7, 6), test::random_ids({1, 3}, 0, 7, 6)),
                   std::invalid_argument, "targets [1, 3] must be shaped like idx [1, 4]");
}

// The attention written in ops (GPTAttention::attend, taken when training with dropout) and the fused op (taken
// otherwise) are one computation: with p = 1e-12 dropout drops nothing, so the two paths must agree.
TEST(GPTAttention, TheFusedOpEqualsTheAttentionWrittenInOps) {
  Generator gen(7);
  GPTAttention attn(GPTConfig{.n_head = 3, .n_embd = 6, .dropout = 1e-12}, gen, std::make_shared<Generator>(0));
  std::vector<std::pair<std::string, Shape>> names;
  for (const auto& [name, p] : attn.named_parameters()) names.emplace_back(name, p.shape());
  EXPECT_EQ(names, (std::vector<std::pair<std::string, Shape>>{
                       {"c_attn.weight", {18, 6}}, {"c_attn.bias", {18}}, {"c_proj.weight", {6, 6}},
                       {"c_proj.bias", {6}}}));
  // Training with dropout takes the attention written in ops (dropout needs the weights in the graph); with
  // p = 1e-12 nothing is dropped, so it must equal the fused op that evaluation takes.
  const Tensor x = Tensor::randn({2, 4, 6}, gen);
  attn.train();
  const AttentionResult ops = attn.forward(x);
  attn.eval();
  const AttentionResult fused = attn.forward(x);
  test::expect_all_close(ops.output, fused.output, 1e-5);
  test::expect_all_close(ops.weights, fused.weights, 1e-5);
}

TEST(GPT, ASecondShardOfAStepPacksNoWeightTheFirstPacked) {
  // Inside a ReusePackedWeights scope (how a thread runs several shards of a data-parallel step), a step's forward
  // and backward only read the weights: a second shard through the same model finds every packing kept. A read that
  // counted as a write (through mutable_data<T>(), core/storage.h) would make every product pack again.
  Generator gen(3);
  const GPT model(GPTConfig{.block_size = 16, .vocab_size = 50, .n_layer = 2, .n_head = 2, .n_embd = 64}, gen);
  const Tensor idx = Tensor::randint(0, 50, {4, 16}, gen), targets = Tensor::randint(0, 50, {4, 16}, gen);
  const kernels::ReusePackedWeights scope;
  model.forward(idx, targets).loss.backward();
  const std::int64_t packed = scope.store().packed(), reused = scope.store().reused();
  ASSERT_GT(packed, 0) << "no product kept a packing: the test does not reach the cache";
  model.forward(idx, targets).loss.backward();
  EXPECT_EQ(scope.store().packed(), packed);
  EXPECT_GE(scope.store().reused() - reused, packed);
}

}  // namespace
}  // namespace cppgrad
