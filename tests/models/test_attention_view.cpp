// models/reverse/attention_view.h: a prediction's attention maps with the labels of their axes, and the panels of
// --attention-svg (one per map and head, each kind of map labelled by what its queries and keys are).
#include <numeric>

#include "models/reverse/attention_view.h"
#include "models/reverse/config.h"
#include "test_util.h"

namespace cppgrad {
namespace {

Tensor weights(const std::vector<std::int64_t>& shape) {  // 0, 1, 2, ... so every cell says where it came from
  const std::int64_t n = std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return Tensor::from_vector(v, shape);
}

TEST(AttentionView, PanelsAreOnePerMapAndHeadLabelledByWhatAttendsToWhat) {
  const std::vector<std::string> rows = {"3", "2", "1"}, cols = {"1", "2", "3"};
  const std::vector<nn::NamedAttention> maps = {{"encoder.0.self_attn", weights({1, 2, 3, 3})},
                                                {"decoder.0.self_attn", weights({1, 1, 3, 3})},
                                                {"decoder.0.cross_attn", weights({1, 3, 3})}};  // one map, no heads
  const std::vector<train::AttentionPanel> panels = reverse::attention_panels(maps, rows, cols);
  ASSERT_EQ(panels.size(), 4u);
  EXPECT_EQ(panels[0].title, "encoder.0.self_attn head 0");
  EXPECT_EQ(panels[1].title, "encoder.0.self_attn head 1");
  EXPECT_EQ(panels[2].title, "decoder.0.self_attn head 0");
  EXPECT_EQ(panels[3].title, "decoder.0.cross_attn head 0");
  // The source attends to itself; the output to its own inputs (BOS, then its outputs but the last); and to the source.
  EXPECT_EQ(panels[0].row_labels, cols);
  EXPECT_EQ(panels[0].col_labels, cols);
  EXPECT_EQ(panels[2].row_labels, rows);
  EXPECT_EQ(panels[2].col_labels, (std::vector<std::string>{"BOS", "3", "2"}));
  EXPECT_EQ(panels[3].row_labels, rows);
  EXPECT_EQ(panels[3].col_labels, cols);
  // Head 1 of the encoder map: cells 9..17, row by row.
  ASSERT_EQ(panels[1].weights.size(), 3u);
  EXPECT_EQ(panels[1].weights[0], (std::vector<double>{9, 10, 11}));
  EXPECT_EQ(panels[1].weights[2], (std::vector<double>{15, 16, 17}));
  EXPECT_EQ(panels[3].weights[1], (std::vector<double>{3, 4, 5}));
}

TEST(AttentionView, AViewHasEveryLayersMapsAndTheLastCrossAttentionAveragedOverHeads) {
  reverse::TrainConfig config;
  config.model.d_model = 16, config.model.n_heads = 2, config.model.d_ff = 24, config.min_len = 2, config.max_len = 5;
  config.model.n_encoder_layers = 2, config.model.n_decoder_layers = 1;
  const data::ReversalConfig c = config.data_config();
  Generator gen(7);
  nn::Seq2SeqTransformer model(config.model_options(), gen);
  model.eval();
  const reverse::Prediction p = reverse::predict_one(model, {4, 2, 7}, c);
  const reverse::AttentionView view = reverse::attention_view(model, p, c);
  ASSERT_EQ(view.maps.size(), 4u);  // 2 encoder self, then the decoder's self and cross
  EXPECT_EQ(view.maps.back().name.find("cross") != std::string::npos, true);
  EXPECT_EQ(view.cols, (std::vector<std::string>{"4", "2", "7", "_", "_"}));
  const std::int64_t T = p.predictions.shape()[1];
  ASSERT_EQ(std::ssize(view.rows), T);
  for (std::int64_t t = 0; t < T; ++t)
    EXPECT_EQ(view.rows[t], t < std::ssize(p.output) ? std::to_string(p.output[t]) : "eos");
  ASSERT_EQ(std::ssize(view.last_mean), T);
  for (const auto& row : view.last_mean) {  // each query's weights over the source: padding gets none, they sum to 1
    ASSERT_EQ(row.size(), 5u);
    EXPECT_NEAR(std::accumulate(row.begin(), row.end(), 0.0), 1.0, 1e-5);
    EXPECT_NEAR(row[3] + row[4], 0.0, 1e-6);
  }
}

}  // namespace
}  // namespace cppgrad
