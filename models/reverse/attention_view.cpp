#include "models/reverse/attention_view.h"

#include <fmt/format.h>

#include "core/autograd.h"
#include "core/ops/reduce.h"

namespace cppgrad::reverse {

AttentionView attention_view(nn::Seq2SeqTransformer& model, const Prediction& prediction,
                             const data::ReversalConfig& config) {
  const Tensor& pred = prediction.predictions;
  Tensor dec_in = Tensor::full({1, pred.shape()[1]}, static_cast<double>(config.bos()), DType::Int64);
  dec_in.slice(1, 1, pred.shape()[1]).copy_(pred.slice(1, 0, pred.shape()[1] - 1));
  AttentionView view;
  const std::vector<std::int64_t>& tokens = prediction.tokens;
  for (std::int64_t i = 0; i < config.max_len; ++i)
    view.cols.push_back(i < std::ssize(tokens) ? std::to_string(tokens[i]) : "_");
  view.maps = model.attention(prediction.batch.src, dec_in, prediction.batch.src_mask);
  const Tensor last = view.maps.back().weights;  // decoder.N.cross_attn
  const std::int64_t T = last.shape()[last.dim() - 2];
  for (std::int64_t t = 0; t < T; ++t)
    view.rows.push_back(t < std::ssize(prediction.output) ? std::to_string(prediction.output[t])
                                                          : (config.variable_length() ? "eos" : "?"));
  const Tensor avg = last.dim() == 4 ? mean(last.select(0, 0), {0}) : last.select(0, 0);  // [T, S]
  view.last_mean.resize(T);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t s = 0; s < avg.shape()[1]; ++s) view.last_mean[t].push_back(avg.at({t, s}));
  return view;
}

std::vector<train::AttentionPanel> attention_panels(const std::vector<nn::NamedAttention>& maps,
                                                    const std::vector<std::string>& rows,
                                                    const std::vector<std::string>& cols) {
  std::vector<std::string> decoder_inputs = {"BOS"};
  for (std::size_t t = 0; t + 1 < rows.size(); ++t) decoder_inputs.push_back(rows[t]);
  std::vector<train::AttentionPanel> panels;
  for (const auto& m : maps) {
    const Tensor w = m.weights.select(0, 0);  // [H, Lq, Lk] or [Lq, Lk]
    const std::int64_t H = w.dim() == 3 ? w.shape()[0] : 1;
    for (std::int64_t h = 0; h < H; ++h) {
      const Tensor wh = w.dim() == 3 ? w.select(0, h) : w;
      // Queries and keys of each kind of map: the source attends to itself, the output to its own inputs
      // (BOS, then what it has produced), and to the source.
      const bool encoder = m.name.rfind("encoder", 0) == 0, cross = m.name.find("cross") != std::string::npos;
      train::AttentionPanel p{fmt::format("{} head {}", m.name, h), {}, encoder ? cols : rows,
                              encoder || cross ? cols : decoder_inputs};
      for (std::int64_t i = 0; i < wh.shape()[0]; ++i) {
        p.weights.emplace_back();
        for (std::int64_t j = 0; j < wh.shape()[1]; ++j) p.weights.back().push_back(wh.at({i, j}));
      }
      panels.push_back(std::move(p));
    }
  }
  return panels;
}

}  // namespace cppgrad::reverse
