// models/reverse/sweep.h: the sweep's settings (one per head count and attention kind, validated, refusals naming the
// setting) and one setting trained to its end.
#include <stdexcept>

#include "models/reverse/sweep.h"
#include "test_util.h"

namespace cppgrad {
namespace {

std::string refusal(const std::string& heads, const std::string& attentions, const reverse::TrainConfig& base) {
  try {
    reverse::sweep_runs(heads, attentions, base);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Sweep, OneRunPerHeadCountAndAttentionKindHeadsOuter) {
  reverse::TrainConfig base;
  base.epochs = 7;
  const auto runs = reverse::sweep_runs("1,2", "scaled_dot,additive,multiplicative", base);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[0].model.n_heads, 1);
  EXPECT_EQ(runs[0].model.cross_attention, nn::CrossAttentionKind::ScaledDot);
  EXPECT_EQ(runs[2].model.cross_attention, nn::CrossAttentionKind::Multiplicative);
  EXPECT_EQ(runs[3].model.n_heads, 2);
  EXPECT_EQ(runs[4].model.cross_attention, nn::CrossAttentionKind::Additive);
  for (const auto& c : runs) EXPECT_EQ(c.epochs, 7);  // the base's other settings
}

TEST(Sweep, RefusalsSayWhatIsWrong) {
  const reverse::TrainConfig base;
  EXPECT_EQ(refusal("1,x", "scaled_dot", base), "--heads: 'x' is not a number");
  EXPECT_EQ(refusal(",", "scaled_dot", base),
            "sweep needs --heads 1,2,4,8 and/or --attention scaled_dot,additive,multiplicative");
  EXPECT_NE(refusal("2", "dot", base).find("'dot'"), std::string::npos);
  // d_model 32 is not a multiple of 3 heads: validate's reason, after the setting it refuses.
  EXPECT_EQ(refusal("3", "additive", base).rfind("setting heads=3 attention=additive: ", 0), 0u);
}

TEST(Sweep, ASettingTrainsItsEpochsAndGivesItsLossCurve) {
  reverse::TrainConfig c;
  c.train_size = 64, c.test_size = 16, c.model.d_model = 16, c.model.n_heads = 2, c.model.d_ff = 24, c.threads = 1, c.epochs = 2;
  c.model.cross_attention = nn::CrossAttentionKind::Additive;
  const reverse::SettingResult r = reverse::train_setting(c);
  EXPECT_EQ(r.summary.epochs, 2);
  EXPECT_GT(r.summary.params, 0);
  EXPECT_EQ(r.curve.label, "heads=2 additive");
  ASSERT_EQ(r.curve.values.size(), 2u);
  EXPECT_EQ(r.curve.values.back(), r.final_loss);
  // The same setting trained directly: the same losses, bit for bit.
  reverse::Trainer direct(c);
  for (int e = 0; e < 2; ++e) EXPECT_EQ(direct.run_epoch().loss, r.curve.values[e]);
}

}  // namespace
}  // namespace cppgrad
