// Steps per second of one training step of the words GPT (BM_GptStep's words shape: vocab 70, d 64, 4 layers,
// 4 heads, context 24, batch 32; AdamW) on the calling thread alone: the same program built natively and for
// WebAssembly (cmake --build --preset wasm --target gpt_step_words; node build-wasm/bin/gpt_step_words.js), so the
// two can be compared on one machine (docs/browser.md). Usage: gpt_step_words [steps, default 200]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/generator.h"
#include "core/tensor.h"
#include "nn/gpt.h"
#include "optim/adam.h"

int main(int argc, char** argv) {
  using namespace cppgrad;
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  if (steps <= 0) {
    std::fprintf(stderr, "gpt_step_words: steps must be a positive whole number, got '%s'\n", argv[1]);
    return 2;
  }
  const nn::GPTConfig config{.block_size = 24, .vocab_size = 70, .n_layer = 4, .n_head = 4, .n_embd = 64};
  Generator init(0), data(1);
  nn::GPT model(config, init);
  optim::Adam adamw(model.named_parameters(), optim::AdamOptions{.lr = 5e-4, .beta1 = 0.9, .beta2 = 0.99,
                                                                 .eps = 1e-8, .weight_decay = 0.01,
                                                                 .decoupled_weight_decay = true});
  const Tensor idx = Tensor::randint(0, 70, {32, 24}, data), targets = Tensor::randint(0, 70, {32, 24}, data);
  double loss = 0;
  auto step = [&] {
    adamw.zero_grad();
    const nn::GPTOutput o = model.forward(idx, targets);  // logits [32, 24, 70], loss []
    o.loss.backward();
    adamw.step();
    loss = o.loss.item();
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up: caches, AdamW's moments
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%d steps in %.3f s: %.1f steps/s, %.3f ms/step (last loss %.4f)\n", steps, seconds, steps / seconds,
              1e3 * seconds / steps, loss);
}
