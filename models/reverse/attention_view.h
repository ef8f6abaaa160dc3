#pragma once
// What a prediction attended to: every layer's and head's attention over one reversed sequence, with the labels of
// its axes, for `cppgrad-reverse predict` (a terminal heatmap of the last cross-attention, --attention-svg's panels)
// and for anyone else who draws them.
#include <string>
#include <vector>

#include "data/reversal.h"
#include "models/reverse/prediction.h"
#include "nn/seq2seq.h"
#include "train/plot/attention_maps.h"

namespace cppgrad::reverse {

struct AttentionView {
  // Every layer's maps in the model's order (encoder self, decoder self, decoder cross): weights [1, H, Lq, Lk], or
  // [1, Lq, Lk] for a single-map kind of cross-attention.
  std::vector<nn::NamedAttention> maps;
  std::vector<std::string> rows;  // T output positions: the predicted tokens, then "eos" (variable lengths) or "?"
  std::vector<std::string> cols;  // S = max_len source positions: the tokens, then "_"
  // The last map (the last decoder layer's cross-attention) averaged over its heads: [T][S].
  std::vector<std::vector<double>> last_mean;
};

// One full forward of the source and the decoded sequence (BOS, then the predictions but the last), without the
// graph: incremental decoding saw one position per call, this fills every layer's maps for every position. The model
// is used in the mode it is in (a loaded checkpoint: eval).
AttentionView attention_view(nn::Seq2SeqTransformer& model, const Prediction& prediction,
                             const data::ReversalConfig& config);

// Every map of every head as a panel titled "<map name> head <h>". rows: the output tokens (T), cols: the source
// tokens (S). Encoder maps are labelled source x source, decoder self-attention output x its inputs (BOS, then the
// outputs but the last), cross-attention output x source.
std::vector<train::AttentionPanel> attention_panels(const std::vector<nn::NamedAttention>& maps,
                                                    const std::vector<std::string>& rows,
                                                    const std::vector<std::string>& cols);

}  // namespace cppgrad::reverse
