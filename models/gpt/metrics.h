#pragma once
// The metrics of a GPT run: the JSON Lines stream of --metrics-out, the history a checkpoint keeps, and the chart.
//   per evaluation: {"step", "train_loss", "val_loss", "val_bpb", "lr", "tokens_per_s", "elapsed_s"}
//   final:          {"event": "final", "val_loss", "val_bpb", "bigram_val_loss", "steps", "params", "train_wall_s"}
// Losses are mean nats per predicted token (perplexity = exp(loss)); val_bpb is the validation loss in bits per byte
// of text, the scale on which models with other tokenizers compare. A checkpoint's history leaves val_bpb out (it is
// val_loss times a factor of the validation split alone), so checkpoints of earlier versions read the same.
#include <cstdint>
#include <string>
#include <vector>

namespace cppgrad::gpt {

// One evaluation: a line of the metrics stream.
struct Evaluation {
  std::int64_t step = 0;    // optimizer steps done
  double train_loss = 0;    // mean training loss of the steps since the previous evaluation
  double val_loss = 0;      // mean nats per predicted token over the whole validation split
  double val_bpb = 0;       // the same in bits per byte of the validation text
  double lr = 0;            // at the latest step
  double tokens_per_s = 0;  // tokens the model read (batch x context) per second of training since the previous one
  double elapsed_s = 0;     // training wall time so far (evaluations excluded), over every session of the run
};

struct FinalSummary {
  double val_loss = 0, val_bpb = 0, bigram_val_loss = 0;
  std::int64_t steps = 0, params = 0;
  double train_wall_s = 0;
};

std::string evaluation_json(const Evaluation& e);  // one line, no newline
// Every evaluation, then the final object when `final` is given; one JSON object per line.
std::string metrics_jsonl(const std::vector<Evaluation>& history, const FinalSummary* final);
// The history as a checkpoint stores it (a JSON array), and back: every field a finite number, steps increasing, none
// past `step` (the checkpoint's global step), so at most step + 1 entries. Throws std::invalid_argument naming the entry.
std::string history_json(const std::vector<Evaluation>& history);
std::vector<Evaluation> parse_history(const std::string& json, std::int64_t step);

// Train and validation loss against steps, with the bigram's validation loss as a flat reference line. SVG.
std::string loss_chart(const std::vector<Evaluation>& history, double bigram_val_loss, const std::string& title);

}  // namespace cppgrad::gpt
