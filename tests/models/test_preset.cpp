// --preset and --init fix the model's shape (models/gpt/preset.h): GPT-2's sizes, the flags given beside them must
// agree, and the config (what a checkpoint stores) holds the shape, not the preset's name. The limits still refuse a
// run the machine cannot hold, and now let every GPT-2 size be read.
#include <nlohmann/json.hpp>

#include "models/gpt/preset.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(GptPreset, Gpt2SetsItsShapeTokenizerAndContext) {
  const gpt::TrainConfig c = gpt::preset_config("gpt2");
  EXPECT_EQ(c.model.n_layer, 12);
  EXPECT_EQ(c.model.n_head, 12);
  EXPECT_EQ(c.model.n_embd, 768);
  EXPECT_EQ(c.context, 1024);
  EXPECT_EQ(c.tokenizer.text(), "gpt2");
  EXPECT_EQ(c.format, data::TextFormat::text);
  const gpt::TrainConfig xl = gpt::preset_config("gpt2-xl");
  EXPECT_EQ(xl.model.n_layer, 48);
  EXPECT_EQ(xl.model.n_head, 25);
  EXPECT_EQ(xl.model.n_embd, 1600);
  EXPECT_THROW_MSG(gpt::preset_config("gpt3"), std::invalid_argument,
                   "--preset 'gpt3': must be one of gpt2 (124M: 12 layers, 12 heads, 768 wide), gpt2-medium (355M");
}

TEST(GptPreset, PinningSetsTheShapeAndRefusesAFlagThatDisagrees) {
  const gpt::TrainConfig shape = gpt::preset_config("gpt2-medium");
  gpt::TrainConfig c;
  c.lr = 3e-4, c.batch_size = 2;  // not the shape's: kept
  gpt::pin_shape(c, shape, {"lr", "batch-size"}, "--preset gpt2-medium");
  EXPECT_EQ(c.model.n_embd, 1024);
  EXPECT_EQ(c.model.n_head, 16);
  EXPECT_EQ(c.model.n_layer, 24);
  EXPECT_EQ(c.context, 1024);
  EXPECT_EQ(c.lr, 3e-4);
  EXPECT_EQ(c.batch_size, 2);
  // a flag that says what the preset says is fine; another value is refused naming both
  gpt::TrainConfig agree;
  agree.model.n_head = 16;
  EXPECT_NO_THROW(gpt::pin_shape(agree, shape, {"heads"}, "--preset gpt2-medium"));
  gpt::TrainConfig disagree;
  disagree.model.n_layer = 6;
  EXPECT_THROW_MSG(gpt::pin_shape(disagree, shape, {"layers"}, "--preset gpt2-medium"), std::invalid_argument,
                   "--layers 6 disagrees with --preset gpt2-medium, which sets --layers 24 (give one or the other)");
  // the context: a shorter window is kept (the position table cropped), a longer one refused
  gpt::TrainConfig shorter;
  shorter.context = 256;
  gpt::pin_shape(shorter, shape, {"context"}, "--preset gpt2-medium");
  EXPECT_EQ(shorter.context, 256);
  EXPECT_EQ(shorter.model.n_layer, 24);
  gpt::TrainConfig longer;
  longer.context = 2048;
  EXPECT_THROW_MSG(gpt::pin_shape(longer, shape, {"context"}, "--preset gpt2-medium"), std::invalid_argument,
                   "--context 2048 is longer than --preset gpt2-medium's 1024: its position table has 1024 rows");
  // a default not typed is not a disagreement: --heads 4 is the default, the preset's 16 wins
  gpt::TrainConfig untyped;
  EXPECT_NO_THROW(gpt::pin_shape(untyped, shape, {}, "--preset gpt2-medium"));
  EXPECT_EQ(untyped.model.n_head, 16);
}

TEST(GptPreset, TheCheckpointsConfigHoldsTheShapeNotThePreset) {
  gpt::TrainConfig c;
  gpt::pin_shape(c, gpt::preset_config("gpt2"), {}, "--preset gpt2");
  const nlohmann::json j = nlohmann::json::parse(c.to_json());
  const nlohmann::json m = nlohmann::json::parse(c.model.to_json());  // a checkpoint's "model"
  EXPECT_EQ(m["n_embd"], 768);
  EXPECT_EQ(m["n_head"], 12);
  EXPECT_EQ(m["n_layer"], 12);
  EXPECT_EQ(j["context"], 1024);
  EXPECT_EQ(j["tokenizer"], "gpt2");
  EXPECT_FALSE(j.contains("preset"));
  EXPECT_FALSE(j.contains("init"));
}

TEST(GptPreset, TheLimitsReadEveryGpt2SizeAndRefuseATrainingStepTooLarge) {
  for (const char* name : {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"})
    EXPECT_NO_THROW(gpt::preset_config(name).check_parameters(50257, 1024)) << name;
  gpt::TrainConfig c = gpt::preset_config("gpt2");
  // 32 rows of 1024 tokens through 124M is about 25e9 activations: refused, naming --batch-size
  EXPECT_THROW_MSG(c.check_sizes(50257, 1024), std::invalid_argument, "lower --batch-size (32)");
  c.batch_size = 1;
  EXPECT_NO_THROW(c.check_sizes(50257, 1024));
  gpt::TrainConfig typo;
  typo.model.n_embd = 8192, typo.model.n_layer = 96, typo.model.n_head = 64;
  EXPECT_THROW_MSG(typo.check_parameters(100, 64), std::invalid_argument, "parameters, more than the limit");
}

}  // namespace
}  // namespace cppgrad
