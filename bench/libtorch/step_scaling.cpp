// The anchor's reversal model in libtorch's C++ API: a C++ user's yardstick beside PyTorch from Python
// (bench/pytorch/step_scaling.py) and cppgrad's BM_TrainStepScaling / BM_TrainStepLarge. The same model as the
// PyTorch reversal anchor (pytorch/honest_reversal.py), written again here (post-LN encoder and decoder blocks,
// attention without biases, learned positions, FFN Linear -> ReLU -> Linear), and the same step: forward,
// cross-entropy, backward, Adam 1e-3, batch 64. Prints the median step time per configuration and thread count.
//
// Built only when Debian's libtorch-dev is installed (an optional target, never a dependency of the library or the
// tests): ./build/bin/libtorch-step-scaling --threads 1 2 [--only "d_model 32"]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int64_t kVocab = 10, kBos = 10, kDecVocab = 11;

struct MultiHeadAttentionImpl : torch::nn::Module {
  int64_t heads, dh;
  torch::nn::Linear W_q{nullptr}, W_k{nullptr}, W_v{nullptr}, W_o{nullptr};
  MultiHeadAttentionImpl(int64_t d_model, int64_t n_heads) : heads(n_heads), dh(d_model / n_heads) {
    auto lin = [&](const char* name) {
      return register_module(name, torch::nn::Linear(torch::nn::LinearOptions(d_model, d_model).bias(false)));
    };
    W_q = lin("W_q"), W_k = lin("W_k"), W_v = lin("W_v"), W_o = lin("W_o");
  }
  // q: [B, Lq, D], k/v: [B, Lk, D]; mask: bool, true = blocked, or undefined
  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& mask = {}) {
    const int64_t B = q.size(0), Lq = q.size(1), Lk = k.size(1), D = q.size(2);
    auto Q = W_q(q).view({B, Lq, heads, dh}).transpose(1, 2);
    auto K = W_k(k).view({B, Lk, heads, dh}).transpose(1, 2);
    auto V = W_v(v).view({B, Lk, heads, dh}).transpose(1, 2);
    auto scores = torch::matmul(Q, K.transpose(-2, -1)) / std::sqrt(static_cast<double>(dh));
    if (mask.defined()) scores = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
    auto out = torch::matmul(torch::softmax(scores, -1), V).transpose(1, 2).contiguous().view({B, Lq, D});
    return W_o(out);
  }
};
TORCH_MODULE(MultiHeadAttention);

struct FeedForwardImpl : torch::nn::Module {
  torch::nn::Linear lin1{nullptr}, lin2{nullptr};
  FeedForwardImpl(int64_t d_model, int64_t d_ff)
      : lin1(register_module("lin1", torch::nn::Linear(d_model, d_ff))),
        lin2(register_module("lin2", torch::nn::Linear(d_ff, d_model))) {}
  torch::Tensor forward(const torch::Tensor& x) { return lin2(torch::relu(lin1(x))); }
};
TORCH_MODULE(FeedForward);

torch::nn::LayerNorm layer_norm(int64_t d) { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})); }

struct EncoderBlockImpl : torch::nn::Module {
  MultiHeadAttention attn{nullptr};
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  FeedForward ffn{nullptr};
  EncoderBlockImpl(int64_t d, int64_t h, int64_t ff)
      : attn(register_module("attn", MultiHeadAttention(d, h))), ln1(register_module("ln1", layer_norm(d))),
        ln2(register_module("ln2", layer_norm(d))), ffn(register_module("ffn", FeedForward(d, ff))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = ln1(x + attn(x, x, x));
    return ln2(x + ffn(x));
  }
};
TORCH_MODULE(EncoderBlock);

struct DecoderBlockImpl : torch::nn::Module {
  MultiHeadAttention self_attn{nullptr}, cross_attn{nullptr};
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr}, ln3{nullptr};
  FeedForward ffn{nullptr};
  DecoderBlockImpl(int64_t d, int64_t h, int64_t ff)
      : self_attn(register_module("self_attn", MultiHeadAttention(d, h))), cross_attn(register_module("cross_attn", MultiHeadAttention(d, h))),
        ln1(register_module("ln1", layer_norm(d))), ln2(register_module("ln2", layer_norm(d))),
        ln3(register_module("ln3", layer_norm(d))), ffn(register_module("ffn", FeedForward(d, ff))) {}
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& mem, const torch::Tensor& causal) {
    x = ln1(x + self_attn(x, x, x, causal));
    x = ln2(x + cross_attn(x, mem, mem));
    return ln3(x + ffn(x));
  }
};
TORCH_MODULE(DecoderBlock);

struct Seq2SeqImpl : torch::nn::Module {
  torch::nn::Embedding src_embed{nullptr}, src_pos{nullptr}, tgt_embed{nullptr}, tgt_pos{nullptr};
  std::vector<EncoderBlock> encoder;
  std::vector<DecoderBlock> decoder;
  torch::nn::Linear fc_out{nullptr};
  Seq2SeqImpl(int64_t d, int64_t h, int64_t ff, int64_t max_len) {
    src_embed = register_module("src_embed", torch::nn::Embedding(kVocab, d));
    src_pos = register_module("src_pos", torch::nn::Embedding(max_len, d));
    tgt_embed = register_module("tgt_embed", torch::nn::Embedding(kDecVocab, d));
    tgt_pos = register_module("tgt_pos", torch::nn::Embedding(max_len, d));
    for (int i = 0; i < 2; ++i) encoder.push_back(register_module("enc" + std::to_string(i), EncoderBlock(d, h, ff)));
    for (int i = 0; i < 2; ++i) decoder.push_back(register_module("dec" + std::to_string(i), DecoderBlock(d, h, ff)));
    fc_out = register_module("fc_out", torch::nn::Linear(d, kVocab));
  }
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& dec_in) {
    auto x = src_embed(src) + src_pos(torch::arange(src.size(1)));
    for (auto& blk : encoder) x = blk(x);
    const int64_t L = dec_in.size(1);
    auto causal = torch::triu(torch::ones({L, L}, torch::kBool), 1);  // true = a future position: blocked
    auto y = tgt_embed(dec_in) + tgt_pos(torch::arange(L));
    for (auto& blk : decoder) y = blk(y, x, causal);
    return fc_out(y);
  }
};
TORCH_MODULE(Seq2Seq);

double median_step_ms(int64_t d, int64_t h, int64_t ff, int64_t len, int min_steps, double min_seconds) {
  torch::manual_seed(0);
  auto src = torch::randint(1, kVocab, {64, len});
  auto tgt = src.flip({1});
  auto dec_in = torch::cat({torch::full({64, 1}, kBos, torch::kLong), tgt.slice(1, 0, len - 1)}, 1);
  Seq2Seq model(d, h, ff, std::max<int64_t>(50, len + 1));
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(1e-3));
  std::vector<double> times;
  const auto start = std::chrono::steady_clock::now();
  for (int it = 0;; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    auto loss = torch::nn::functional::cross_entropy(model(src, dec_in).reshape({-1, kVocab}), tgt.reshape({-1}));
    opt.zero_grad();
    loss.backward();
    opt.step();
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= 2) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (static_cast<int>(times.size()) >= min_steps &&
        std::chrono::duration<double>(t1 - start).count() >= min_seconds)
      break;
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> threads;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0)
      while (i + 1 < argc && argv[i + 1][0] != '-') threads.push_back(std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: libtorch-step-scaling [--threads N ...] [--only TEXT]\n");
      return 2;
    }
  }
  if (threads.empty()) threads = {1, 2};
  struct Config { const char* name; int64_t d, h, ff, len; };
  const Config configs[] = {{"d_model 32, len 8", 32, 4, 64, 8},       {"d_model 128, len 8", 128, 4, 256, 8},
                            {"d_model 512, len 8", 512, 4, 1024, 8},   {"d_model 32, len 64", 32, 4, 64, 64},
                            {"d_model 32, len 256", 32, 4, 64, 256},   {"large: d_model 256, 8 heads, len 64", 256, 8, 1024, 64}};
  std::printf("libtorch %s\n", TORCH_VERSION);
  for (const Config& c : configs) {
    if (!only.empty() && std::string(c.name).find(only) == std::string::npos) continue;
    for (int t : threads) {
      torch::set_num_threads(t);
      std::printf("%-40s threads=%d  step median %8.2f ms\n", c.name, t, median_step_ms(c.d, c.h, c.ff, c.len, 3, 2.0));
      std::fflush(stdout);
    }
  }
  return 0;
}
