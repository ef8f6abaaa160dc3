#pragma once
// The lines cppgrad-gpt prints about a run and a checkpoint, built from their numbers: one place for their format
// (tests/cli read them, a person compares them across runs), which a test can check without running the program.
// Losses are nats per predicted token; perplexity is exp(loss).
#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "models/gpt/metrics.h"
#include "models/gpt/trainer.h"
#include "nn/generate.h"

namespace cppgrad::gpt {

// exp(loss) with two decimals: 0 -> "1.00".
std::string perplexity(double loss);

// What `train` with no flags runs, from TrainConfig's defaults (the usage text's line): "the characters of
// /usr/share/dict/american-english, d_model 64, 4 layers, 4 heads, batch 32, AdamW 0.0005, 2000 steps".
std::string default_run_text();

// What a run is before its first step, ending with '\n': the data, its splits, seed, vocabulary, context and
// threads; the model's size; the bigram baseline's validation loss; and "resumed at step N of M" when it goes on.
std::string run_header(Trainer& trainer);

// One evaluation of a run of `steps` steps: "step   100/2000  train 2.1000  val 2.2000 (perplexity 9.03, 3.174
// bits/byte)  lr 5.00e-04  1234 tokens/s\n".
std::string evaluation_line(const Evaluation& e, std::int64_t steps);

// The run's summary from its latest evaluation (the final object of --metrics-out), and its line "done: ...\n".
FinalSummary final_summary(Trainer& trainer);
std::string done_line(const FinalSummary& final);

// The samples a run prints at its end, "samples:..." ending with '\n': lines on one line, a space before each; a
// running text as it is, a blank line between two.
std::string samples_line(const data::TextCorpus& corpus, const std::vector<std::string>& samples);

// --explain's two lines for a chosen token: its label and the five likeliest next tokens before, then after
// temperature and the filters, each with its probability (those the filters removed left out).
std::string explain_lines(const data::Tokenizer& tokenizer, const nn::GenerateStep& step);

// eval's line, "checkpoint PATH (step N): loss ..., perplexity ..., ... bits/byte, over T tokens (B bytes) of
// <what>\n", and its --metrics-out object {"event": "eval", "loss", "perplexity", "bpb", "tokens", "bytes"} + '\n'.
std::string eval_line(const std::string& checkpoint, std::int64_t steps_done, const SplitLoss& loss,
                      const std::string& what);
std::string eval_json(const SplitLoss& loss);

}  // namespace cppgrad::gpt
