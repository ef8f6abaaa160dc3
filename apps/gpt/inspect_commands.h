#pragma once
// `cppgrad-gpt eval` and `attention`: what a trained checkpoint says about a text, with no training.
//
//   cppgrad-gpt eval      --checkpoint CKPT [--data FILE] [--metrics-out FILE] [--threads N]
//   cppgrad-gpt attention --checkpoint CKPT --prompt TEXT [--svg FILE] [--no-color]
//
// eval: loss, perplexity and bits per byte of the checkpoint's validation split (its --data read again), or of a file
// read through its tokenizer (gpt/eval_data.h). attention: every layer's and head's causal attention over the prompt,
// the last layer's mean over heads as a terminal heatmap, every map as SVG panels with --svg (gpt/attention_panels.h).

namespace cppgrad::gpt {

int cmd_eval(int argc, char** argv);
int cmd_attention(int argc, char** argv);

}  // namespace cppgrad::gpt
