// Module behaviour: parameter names, state dicts, init, train/eval, errors, causality, masking, summaries.
#include <filesystem>
#include <set>

#include "core/autograd.h"
#include "core/ops/attention.h"
#include "core/ops/elementwise.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/views.h"
#include "core/safetensors.h"
#include "nn/additive_attention.h"
#include "nn/attention.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/multi_head_attention.h"
#include "nn/multiplicative_attention.h"
#include "nn/self_attention.h"
#include "nn/seq2seq.h"
#include "nn_test_util.h"

namespace cppgrad {
namespace {

using namespace nn;
using test::expect_all_close;
using test::random_ids;

// A small reversal model (vocabulary 10, d_model 16, 2 heads, 2 + 2 layers).
Seq2SeqOptions small_options() {
  return {.src_vocab = 10, .tgt_vocab = 11, .out_vocab = 10, .d_model = 16, .n_heads = 2, .n_encoder_layers = 2,
          .n_decoder_layers = 2, .d_ff = 32, .max_len = 8};
}

// The configuration a golden seq2seq_reversal case records in its metadata (whatever golden directory is in use).
Seq2SeqOptions golden_options(const std::map<std::string, std::string>& meta) {
  auto num = [&](const char* key) { return std::stoll(meta.at(key)); };
  return {.src_vocab = num("vocab"), .tgt_vocab = num("vocab") + 1, .out_vocab = num("vocab"),
          .d_model = num("d_model"), .n_heads = num("n_heads"), .n_encoder_layers = num("n_encoder_layers"),
          .n_decoder_layers = num("n_decoder_layers"), .d_ff = num("d_ff"), .max_len = num("max_len")};
}

TEST(Module, ParameterNamesAreDottedAndInRegistrationOrder) {
  Generator gen(0);
  MultiHeadAttention mha({.d_model = 8, .n_heads = 2}, gen);
  std::vector<std::string> names;
  for (const auto& [n, p] : mha.named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"}));
  EXPECT_EQ(mha.num_parameters(), 4 * 64);
}

TEST(Module, Seq2SeqNamesMatchThePyTorchGoldenModel) {
  Generator gen(0);
  const SafetensorsFile golden = read_safetensors((test::golden_dir() / "seq2seq_reversal.safetensors").string());
  Seq2SeqTransformer model(golden_options(golden.metadata), gen);
  std::set<std::string> ours, theirs;
  for (const auto& [n, p] : model.named_parameters()) ours.insert(n);
  for (const auto& [n, t] : golden.tensors)
    if (n.rfind("param.", 0) == 0) theirs.insert(n.substr(6));
  EXPECT_EQ(ours, theirs);
  EXPECT_GT(ours.size(), 20u);
}

TEST(Module, SplitAndMergeHeadsRefuseShapesTheyCannotSplit) {
  // [2, 3, 10] into 4 heads used to drop two features silently (10 / 4 = 2 per head).
  EXPECT_THROW_MSG(split_heads(Tensor::zeros({2, 3, 10}), 4), std::invalid_argument,
                   "split_heads: x [2, 3, 10] cannot be split into 4 heads");
  EXPECT_THROW_MSG(split_heads(Tensor::zeros({3, 10}), 2), std::invalid_argument, "must be [B, L, D]");
  EXPECT_THROW_MSG(split_heads(Tensor::zeros({2, 3, 8}), 0), std::invalid_argument, "into 0 heads");
  EXPECT_THROW_MSG(merge_heads(Tensor::zeros({2, 3, 8})), std::invalid_argument, "merge_heads: x must be [B, H, L, dh]");
  EXPECT_EQ(merge_heads(split_heads(Tensor::zeros({2, 3, 8}), 4)).shape(), (Shape{2, 3, 8}));
}

TEST(Module, InitialisationFollowsPyTorchDefaults) {
  Generator gen(1);
  Linear lin({.in = 100, .out = 50}, gen);
  const double bound = 0.1;  // 1 / sqrt(100)
  for (float v : lin.weight().to_vector<float>()) {
    EXPECT_GE(v, -bound);
    EXPECT_LT(v, bound);
  }
  for (float v : lin.bias().to_vector<float>()) EXPECT_LT(std::abs(v), bound);
  LayerNorm norm(3);
  EXPECT_EQ(norm.state_dict().at("weight").to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(norm.state_dict().at("bias").to_vector<float>(), (std::vector<float>{0, 0, 0}));
  Generator g1(5), g2(5);
  EXPECT_EQ(Linear({.in = 3, .out = 2}, g1).weight().to_vector<float>(), Linear({.in = 3, .out = 2}, g2).weight().to_vector<float>());
}

TEST(Module, StateDictRoundTripsThroughSafetensors) {
  Generator gen(2);
  Seq2SeqTransformer a(small_options(), gen), b(small_options(), gen);
  const auto dir = std::filesystem::temp_directory_path() / ("cppgrad_module_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.safetensors").string();
  a.save(path, {{"note", "test"}});
  b.load(path);
  for (const auto& [name, p] : a.named_parameters())
    EXPECT_EQ(p.to_vector<float>(), b.state_dict().at(name).to_vector<float>()) << name;
  std::filesystem::remove_all(dir);
}

TEST(Module, LoadStateDictRefusesMissingUnexpectedAndMisshapedEntries) {
  Generator gen(3);
  Linear lin({.in = 3, .out = 2}, gen);
  StateDict ok = lin.state_dict();
  StateDict missing = ok;
  missing.erase("bias");
  EXPECT_THROW_MSG(lin.load_state_dict(missing), std::invalid_argument, "missing entry 'bias' (shape [2])");
  StateDict extra = ok;
  extra["gamma"] = Tensor::ones({2});
  EXPECT_THROW_MSG(lin.load_state_dict(extra), std::invalid_argument, "unexpected entry 'gamma'");
  StateDict wrong = ok;
  wrong["weight"] = Tensor::ones({3, 2});
  EXPECT_THROW_MSG(lin.load_state_dict(wrong), std::invalid_argument,
                   "entry 'weight' has shape [3, 2] but the parameter has shape [2, 3]");
}

TEST(Module, AssignStateDictTakesTheEntriesMemoryAndRefusesWhatLoadRefuses) {
  Generator gen(3), other(4);
  Linear lin({.in = 3, .out = 2}, gen), source({.in = 3, .out = 2}, other);
  const Tensor handle = lin.weight();  // a module's own handle: it must see the assigned values
  StateDict state = {{"weight", source.weight().detach().clone()}, {"bias", source.bias().detach().clone()}};
  lin.assign_state_dict(state);
  EXPECT_EQ(lin.weight().data<float>(), state.at("weight").data<float>()) << "assigned, not copied";
  EXPECT_EQ(handle.to_vector<float>(), source.weight().to_vector<float>());
  EXPECT_EQ(lin.bias().to_vector<float>(), source.bias().to_vector<float>());
  EXPECT_EQ(lin.weight().requires_grad(), true);

  // Another dtype is converted; one tensor given for two parameters is not shared by them; an entry that is the
  // parameter's own memory leaves it be.
  Linear square({.in = 2, .out = 2}, gen);
  square.assign_state_dict({{"weight", Tensor::full({2, 2}, 0.5, DType::Float64)}, {"bias", Tensor::ones({2})}});
  EXPECT_EQ(square.weight().dtype(), DType::Float32);
  EXPECT_EQ(square.weight().to_vector<float>(), std::vector<float>(4, 0.5f));
  const Tensor one = Tensor::ones({4});
  Linear pair({.in = 2, .out = 2}, gen);
  pair.assign_state_dict({{"weight", one.reshape({2, 2})}, {"bias", one.narrow(0, 0, 2)}});
  pair.bias().fill_(3.0);
  EXPECT_EQ(pair.weight().to_vector<float>(), std::vector<float>(4, 1.0f)) << "the bias must not be the weight's memory";
  Linear part({.in = 2, .out = 2}, gen);
  part.assign_state_dict({{"weight", Tensor::ones({2, 2})}, {"bias", Tensor::ones({4}).narrow(0, 0, 2)}});
  EXPECT_EQ(part.bias().impl().storage->nbytes(), 2 * sizeof(float)) << "a part of a larger memory is copied out";
  LayerNorm norm(2);  // two parameters of one shape, given one tensor: the second gets a copy
  const Tensor both = Tensor::ones({2});
  norm.assign_state_dict({{"weight", both}, {"bias", both}});
  const auto named = norm.named_parameters();
  EXPECT_NE(named[0].second.data<float>(), named[1].second.data<float>());
  const float* kept = square.weight().data<float>();
  StateDict own = square.state_dict();
  own["bias"] = Tensor::zeros({2});
  square.assign_state_dict(own);
  EXPECT_EQ(square.weight().data<float>(), kept);
  EXPECT_EQ(square.bias().to_vector<float>(), std::vector<float>(2, 0.0f));

  StateDict missing = state;
  missing.erase("bias");
  EXPECT_THROW_MSG(lin.assign_state_dict(missing), std::invalid_argument, "missing entry 'bias' (shape [2])");
  // A replica shares the model's memory: assigning the model would leave the replica on the old values.
  Linear model({.in = 3, .out = 2}, gen), replica({.in = 3, .out = 2}, other);
  replica.share_parameters_with(model);
  const auto before = model.weight().to_vector<float>();
  EXPECT_THROW_MSG(model.assign_state_dict(state), std::logic_error, "parameter 'weight' shares its memory");
  EXPECT_EQ(model.weight().to_vector<float>(), before) << "all or nothing";
}

TEST(Module, ToFloat64KeepsHandlesValid) {
  Generator gen(4);
  Linear lin({.in = 2, .out = 2}, gen);
  const auto before = lin.weight().to_vector<float>();
  lin.to(DType::Float64);
  EXPECT_EQ(lin.weight().dtype(), DType::Float64);
  const auto after = lin.weight().to_vector<double>();
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], static_cast<double>(before[i]));
  EXPECT_EQ(lin.forward(Tensor::ones({1, 2}, DType::Float64)).dtype(), DType::Float64);
}

TEST(Module, AReplicaSharesParameterValuesButKeepsItsOwnGradients) {
  Generator gen(5), other(6);
  Linear model({.in = 3, .out = 2}, gen), replica({.in = 3, .out = 2}, other);
  replica.share_parameters_with(model);
  EXPECT_EQ(replica.weight().to_vector<float>(), model.weight().to_vector<float>());
  model.weight().fill_(0.5);  // an optimizer step on the model: the replica sees it
  EXPECT_EQ(replica.weight().to_vector<float>(), std::vector<float>(6, 0.5f));
  sum(replica.forward(Tensor::ones({4, 3}))).backward();
  EXPECT_TRUE(replica.weight().grad().defined());
  EXPECT_FALSE(model.weight().grad().defined()) << "the replica's backward must not touch the model's gradients";

  Linear wider({.in = 4, .out = 2}, other);
  EXPECT_THROW_MSG(wider.share_parameters_with(model), std::invalid_argument, "parameter 'weight' [2, 4]");
}

TEST(Module, TrainAndEvalReachEverySubmoduleAndDropoutObeys) {
  Generator gen(5);
  Seq2SeqOptions o = small_options();
  o.dropout = 0.5;
  Seq2SeqTransformer model(o, gen);
  Tensor src = random_ids({2, 5}, 1, 10, 1), dec = random_ids({2, 5}, 1, 11, 2);
  model.eval();
  for (const auto& [n, child] : model.named_children()) EXPECT_FALSE(child->is_training()) << n;
  NoGradGuard no_grad;
  EXPECT_EQ(model.forward(src, dec).to_vector<float>(), model.forward(src, dec).to_vector<float>());  // deterministic
  model.train();
  EXPECT_NE(model.forward(src, dec).to_vector<float>(), model.forward(src, dec).to_vector<float>());  // masks differ
}

TEST(Module, MisconfiguredModulesSayWhy) {
  Generator gen(6);
  EXPECT_THROW_MSG(MultiHeadAttention({.d_model = 10, .n_heads = 4}, gen), std::invalid_argument,
                   "d_model (10) must be divisible by n_heads (4)");
  Linear lin({.in = 3, .out = 2}, gen);
  EXPECT_THROW_MSG(lin.forward(Tensor::ones({2, 4})), std::invalid_argument, "Linear: input [2, 4] must end in in=3");
  Embedding emb(7, 2, gen);
  EXPECT_THROW_MSG(emb.forward(Tensor::from_vector<std::int64_t>({7}, {1})), std::out_of_range,
                   "embedding: id 7 is out of range for a table of 7 rows");
}

TEST(Attention, WorkedExampleFromTheSeeds) {
  // Query "it" = [3, 1] against keys animal [3, 1], street [1, 4], because [1.5, 0.5].
  Tensor q = Tensor::from_vector<double>({3, 1}, {1, 2});
  Tensor k = Tensor::from_vector<double>({3, 1, 1, 4, 1.5, 0.5}, {3, 2});
  Tensor v = Tensor::from_vector<double>({2, 1.5, 0.5, 0.3, -0.5, 1.2}, {3, 2});
  AttentionResult r = scaled_dot_product_attention(q, k, v);
  const auto w = r.weights.to_vector<double>();
  EXPECT_NEAR(w[0], 0.87, 0.005);
  EXPECT_NEAR(w[1], 0.10, 0.005);
  EXPECT_NEAR(w[2], 0.03, 0.005);
  const auto out = r.output.to_vector<double>();
  EXPECT_NEAR(out[0], 1.78, 0.005);
  EXPECT_NEAR(out[1], 1.37, 0.005);
}

TEST(Attention, BlockedKeysGetExactlyZeroWeight) {
  Generator gen(7);
  Tensor q = Tensor::randn({2, 3, 4}, gen, DType::Float64), k = Tensor::randn({2, 5, 4}, gen, DType::Float64);
  Tensor v = Tensor::randn({2, 5, 4}, gen, DType::Float64);
  Tensor mask = key_padding_mask_from_lengths(Tensor::from_vector<std::int64_t>({5, 2}, {2}), 5).squeeze(1);
  Tensor w = scaled_dot_product_attention(q, k, v, mask).weights;  // [2, 3, 5]
  for (int i = 0; i < 3; ++i) {
    for (int j = 2; j < 5; ++j) EXPECT_EQ(w.at({1, i, j}), 0.0);
    EXPECT_NEAR(w.at({1, i, 0}) + w.at({1, i, 1}), 1.0, 1e-15);
    for (int j = 0; j < 5; ++j) EXPECT_GT(w.at({0, i, j}), 0.0);
  }
  // The same for the multi-head, additive and multiplicative layers.
  Tensor pad = key_padding_mask_from_lengths(Tensor::from_vector<std::int64_t>({5, 2}, {2}), 5);  // [2, 1, 1, 5]
  Tensor x = Tensor::randn({2, 3, 4}, gen), mem = Tensor::randn({2, 5, 4}, gen);
  MultiHeadAttention mha({.d_model = 4, .n_heads = 2}, gen);
  AdditiveAttention add_attn({.d_query = 4, .d_key = 4, .d_hidden = 3}, gen);
  MultiplicativeAttention mul_attn({.d_query = 4, .d_key = 4}, gen);
  for (const AttentionModule* m : std::vector<const AttentionModule*>{&mha, &add_attn, &mul_attn}) {
    Tensor weights = m->attend(x, mem, mem, pad).weights;  // [2, (H,) 3, 5]
    Tensor last = weights.select(0, 1).slice(-1, 2, 5);
    for (float val : last.to_vector<float>()) EXPECT_EQ(val, 0.0f) << m->type_name();
  }
}

TEST(Attention, CausalSelfAttentionSeesNoFuture) {
  Generator gen(8);
  CausalSelfAttention attn({.d_model = 4, .n_heads = 2}, gen);
  Tensor w = attn.forward(Tensor::randn({1, 4, 4}, gen)).weights;  // [1, 2, 4, 4]
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) EXPECT_EQ(w.at({0, h, i, j}), 0.0);
}

TEST(Attention, FusedOpEqualsTheComposedOpsWithTheSameGradients) {
  // float64 through the fused op (one graph node) and through matmul, mul, where, softmax, matmul: the outputs,
  // weights and gradients agree. Heads are non-contiguous views; the mask combines causal and key padding, and
  // leaves query 0 of batch item 1 with no key at all.
  Generator gen(31);
  const std::int64_t B = 2, H = 3, L = 5, dh = 4;
  auto heads = [&](const Tensor& x) { return x.view({B, L, H, dh}).transpose(1, 2); };  // [B, H, L, dh]
  Tensor mask = Tensor::ones({B, 1, L, L}, DType::Bool);
  for (std::int64_t i = 0; i < L; ++i)
    for (std::int64_t j = i + 1; j < L; ++j) mask.set({0, 0, i, j}, 0), mask.set({1, 0, i, j}, 0);
  mask.set({1, 0, 0, 0}, 0);
  Tensor x[3], grads[2][3], out[2], weights[2];
  for (auto& t : x) t = Tensor::randn({B, L, H * dh}, gen, DType::Float64).set_requires_grad();
  const Tensor upstream = Tensor::randn({B, H, L, dh}, gen, DType::Float64);
  for (int fused = 0; fused < 2; ++fused) {
    for (auto& t : x) t.zero_grad();
    if (fused) {
      FusedAttention r = fused_attention(heads(x[0]), heads(x[1]), heads(x[2]), mask);
      out[fused] = r.output, weights[fused] = r.weights;
    } else {
      AttentionResult r = scaled_dot_product_attention(heads(x[0]), heads(x[1]), heads(x[2]), mask);
      out[fused] = r.output, weights[fused] = r.weights.detach();
    }
    sum(mul(out[fused], upstream)).backward();
    for (int i = 0; i < 3; ++i) grads[fused][i] = x[i].grad();
  }
  EXPECT_FALSE(weights[1].requires_grad());
  expect_all_close(out[1], out[0], 1e-12);
  expect_all_close(weights[1], weights[0], 1e-12);
  for (int i = 0; i < 3; ++i) expect_all_close(grads[1][i], grads[0][i], 1e-12);
  EXPECT_EQ(out[1].at({1, 0, 0, 0}), 0.0);  // the query with no key: zero output
}

TEST(Attention, FusedOpRefusesMismatchedShapes) {
  Tensor q = Tensor::ones({2, 3, 4}), k = Tensor::ones({2, 5, 4});
  EXPECT_THROW_MSG(fused_attention(q, Tensor::ones({2, 5, 3}), k), std::invalid_argument,
                   "attention: q and k must share d_k, got q [2, 3, 4], k [2, 5, 3], v [2, 5, 4]");
  EXPECT_THROW_MSG(fused_attention(q, k, Tensor::ones({2, 4, 4})), std::invalid_argument,
                   "attention: k and v must have the same length Lk");
  EXPECT_THROW_MSG(fused_attention(q, Tensor::ones({1, 5, 4}), k), std::invalid_argument,
                   "attention: q, k and v need the same leading (batch, head) dims");
  EXPECT_THROW_MSG(fused_attention(q, k, k, Tensor::ones({3, 3}, DType::Bool)), std::invalid_argument,
                   "attention: mask [3, 3] does not broadcast to the attention scores [2, 3, 5]");
}

TEST(Attention, MaskMustBroadcastToTheScores) {
  Tensor q = Tensor::ones({2, 3, 4}), k = Tensor::ones({2, 5, 4});
  EXPECT_THROW_MSG(scaled_dot_product_attention(q, k, k, Tensor::ones({3, 3}, DType::Bool)), std::invalid_argument,
                   "scaled_dot_product_attention: mask [3, 3] does not broadcast to the attention scores [2, 3, 5]");
  EXPECT_THROW_MSG(scaled_dot_product_attention(q, k, k, Tensor::ones({5})), std::invalid_argument, "mask must be bool");
}

TEST(Attention, MaskHelpers) {
  EXPECT_EQ(causal_mask(3).to_vector<bool>(), (std::vector<bool>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
  Tensor ids = Tensor::from_vector<std::int64_t>({4, 5, 0, 7, 0, 0}, {2, 3});
  Tensor m = key_padding_mask_from_ids(ids, 0);
  EXPECT_EQ(m.shape(), (Shape{2, 1, 1, 3}));
  EXPECT_EQ(m.to_vector<bool>(), (std::vector<bool>{1, 1, 0, 1, 0, 0}));
  EXPECT_EQ(key_padding_mask_from_lengths(Tensor::from_vector<std::int64_t>({1, 3}, {2}), 3).to_vector<bool>(),
            (std::vector<bool>{1, 0, 0, 1, 1, 1}));
}

TEST(Seq2Seq, DecoderIsCausal) {
  // Changing decoder inputs at positions >= j must leave the logits at positions < j exactly unchanged.
  Generator gen(9);
  Seq2SeqTransformer model(small_options(), gen);
  model.eval();
  NoGradGuard no_grad;
  Tensor src = random_ids({3, 6}, 1, 10, 3), dec = random_ids({3, 6}, 0, 11, 4);
  Tensor base = model.forward(src, dec);
  for (std::int64_t j = 1; j < 6; ++j) {
    Tensor changed = dec.clone();
    Generator g(100 + j);
    changed.slice(1, j, 6).copy_(Tensor::randint(0, 11, {3, 6 - j}, g));
    Tensor out = model.forward(src, changed);
    EXPECT_EQ(out.slice(1, 0, j).to_vector<float>(), base.slice(1, 0, j).to_vector<float>()) << "j=" << j;
    EXPECT_NE(out.slice(1, j, 6).to_vector<float>(), base.slice(1, j, 6).to_vector<float>()) << "j=" << j;
  }
}

// Every layer's weights, returned by the call that asks: the model keeps none between calls.
TEST(Seq2Seq, AttentionMapsOfEveryLayerAreReturnedWhenAsked) {
  Generator gen(10);
  Seq2SeqTransformer model(small_options(), gen);
  const Tensor src = random_ids({2, 6}, 1, 10, 5), dec_in = random_ids({2, 4}, 1, 11, 6);
  const auto maps = model.attention(src, dec_in);
  ASSERT_EQ(maps.size(), 2u + 2u * 2u);
  EXPECT_EQ(maps[0].name, "encoder.0.self_attn");
  EXPECT_EQ(maps[0].weights.shape(), (Shape{2, 2, 6, 6}));
  EXPECT_EQ(maps.back().name, "decoder.1.cross_attn");
  EXPECT_EQ(maps.back().weights.shape(), (Shape{2, 2, 4, 6}));
  // The layers' weights are a forward's: the last cross-attention's rows sum to 1 over the source.
  const Tensor sums = sum(maps.back().weights, {-1});
  for (const double v : sums.to_double_vector()) EXPECT_NEAR(v, 1.0, 1e-5);
  // Another input gives other weights (the comparison can fail).
  const auto other = model.attention(random_ids({2, 6}, 1, 10, 7), dec_in);
  EXPECT_NE(other.back().weights.to_double_vector(), maps.back().weights.to_double_vector());
}

// The summary needs no forward: each layer's shapes are its own parameters'.
TEST(Seq2Seq, SummaryListsLayersParameterShapesAndTotal) {
  Generator gen(11);
  Seq2SeqTransformer model(small_options(), gen);
  const std::string s = summary(model, "reverser");
  EXPECT_THAT(s, ::testing::HasSubstr("reverser (Seq2SeqTransformer)"));
  EXPECT_THAT(s, ::testing::HasSubstr("cross_attn (MultiHeadAttention)"));
  EXPECT_THAT(s, ::testing::HasSubstr("weight [10, 16], bias [10]"));  // out: d_model 16 -> out_vocab 10
  EXPECT_THAT(s, ::testing::Not(::testing::HasSubstr("weight [16, 10]")));  // the transpose would be wrong
  EXPECT_THAT(s, ::testing::HasSubstr("Total params: " + std::to_string(model.num_parameters())));
}

// A Layer is chosen at run time and called through the base: the same result as the module's own forward, so a
// model can hold "a norm" and build a LayerNorm or another one from its config.
TEST(Layer, ForwardThroughTheBaseIsTheModulesOwn) {
  Generator gen(5);
  const auto norm = std::make_shared<LayerNorm>(4);
  const auto linear = std::make_shared<Linear>(LinearOptions{.in = 4, .out = 3}, gen);
  const std::vector<std::shared_ptr<Layer>> layers{norm, linear};
  const Tensor x = Tensor::randn({2, 4}, gen);
  EXPECT_EQ(layers[0]->forward(x).to_vector<float>(), norm->forward(x).to_vector<float>());
  EXPECT_EQ(layers[1]->forward(x).to_vector<float>(), linear->forward(x).to_vector<float>());
  EXPECT_NE(layers[0]->forward(x).to_vector<float>(), x.to_vector<float>());  // the norm did something
}

}  // namespace
}  // namespace cppgrad
