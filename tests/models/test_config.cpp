// The programs' config tables (models/gpt/config.cpp, models/reverse/config.cpp): the checkpoint's JSON keeps the keys
// earlier versions wrote, a config an older version wrote (without a key added since) still loads, and a value out of
// bounds is refused naming its flag.
#include <nlohmann/json.hpp>

#include "models/gpt/config.h"
#include "models/reverse/config.h"
#include "test_util.h"
#include "train/data_parallel.h"
#include "train/run_config.h"

namespace cppgrad {
namespace {

// A cppgrad-gpt config as the version before --shards wrote it, its model's sizes moved to the model's own JSON (as
// the upgrade from a v1 checkpoint moves them: models/gpt/checkpoint.cpp, tests/models/test_gpt_checkpoint_v1.cpp).
constexpr const char* kGptBeforeShards =
    R"({"batch_size":32,"clip_grad":0.0,"context":0,"data":"/usr/share/dict/american-english",)"
    R"("eval_every":500,"format":"lines","lr":0.0005,"schedule":"constant",)"
    R"("seed":7,"steps":2000,"threads":0,"warmup_steps":0,"weight_decay":0.01})";

TEST(GptConfig, AnOlderCheckpointsConfigLoadsWithTheNewKeysDefaults) {
  const gpt::TrainConfig c = gpt::TrainConfig::from_json(kGptBeforeShards);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.shards, train::kShardsBeforeTheFlag);  // absent: the 8 such a checkpoint has always resumed with
  EXPECT_NO_THROW(c.validate());
}

TEST(GptConfig, TheJsonKeepsTheKeysEarlierVersionsWrote) {
  const nlohmann::json j = nlohmann::json::parse(gpt::TrainConfig{}.to_json());
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"batch_size", "clip_grad", "context", "data", "eval_every", "format", "lr",
                                            "schedule", "seed", "shards", "steps", "threads", "warmup_steps",
                                            "weight_decay"}));
  const gpt::TrainConfig back = gpt::TrainConfig::from_json(gpt::TrainConfig{}.to_json());
  EXPECT_TRUE(back.mismatched_for_resume(gpt::TrainConfig{}).empty());
}

// The model's config is its own (nanoGPT's model_args): its keys are nanoGPT's names, it reads back equal, and a value
// out of its bound, an unknown key or n_head not dividing n_embd is refused naming it. The run's flags set it.
TEST(GptConfig, TheModelsConfigIsItsOwnJsonUnderNanoGptsNames) {
  const nn::GPTConfig m{.block_size = 64, .vocab_size = 30, .n_layer = 2, .n_head = 4, .n_embd = 32, .dropout = 0.1,
                        .dropout_seed = 8};
  const nlohmann::json j = nlohmann::json::parse(m.to_json());
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"block_size", "dropout", "dropout_seed", "n_embd", "n_head", "n_layer",
                                            "vocab_size"}));
  EXPECT_EQ(nn::GPTConfig::from_json(m.to_json()), m);
  nn::GPTConfig other = m;
  other.n_head = 8;
  EXPECT_NE(nn::GPTConfig::from_json(other.to_json()), m);  // the comparison can fail
  EXPECT_THROW_MSG(nn::GPTConfig::from_json(R"({"n_embd": 9000})"), std::invalid_argument,
                   "--d-model must be in 1..8192, got 9000");
  EXPECT_THROW_MSG(nn::GPTConfig::from_json(R"({"block_size": 0})"), std::invalid_argument,
                   "block_size must be in 1..4096, got 0");
  EXPECT_THROW_MSG(nn::GPTConfig::from_json(R"({"n_embd": 30, "n_head": 4})"), std::invalid_argument,
                   "n_embd (30) must be a multiple of n_head (4)");
  EXPECT_THROW_MSG(nn::GPTConfig::from_json(R"({"d_model": 32})"), std::invalid_argument,
                   "model has the key \"d_model\", which this program does not know");
  gpt::TrainConfig c;
  gpt::config_table().set_flag(c, "d-model", "32");
  gpt::config_table().set_flag(c, "heads", "2");
  EXPECT_EQ(c.model.n_embd, 32);
  EXPECT_EQ(c.model.n_head, 2);
  EXPECT_FALSE(nlohmann::json::parse(c.to_json()).contains("n_embd"));  // the run's JSON leaves the model's rows out
}

// The flag's text into a default config, then its bounds: what `train --<flag> <text>` checks.
template <typename Config>
void set_and_validate(const ConfigTable<Config>& table, const std::string& flag, const std::string& text) {
  Config c;
  table.set_flag(c, flag, text);
  c.validate();
}

TEST(GptConfig, AWrongValueIsRefusedNamingTheFlag) {
  const auto& t = gpt::config_table();
  EXPECT_THROW_MSG(set_and_validate(t, "format", "poems"), std::invalid_argument, "--format must be lines or text, got 'poems'");
  EXPECT_THROW_MSG(set_and_validate(t, "schedule", "linear"), std::invalid_argument,
                   "--schedule must be constant or cosine, got 'linear'");
  EXPECT_THROW_MSG(set_and_validate(t, "d-model", "9000"), std::invalid_argument, "--d-model must be in 1..8192, got 9000");
  EXPECT_THROW_MSG(set_and_validate(t, "shards", "3"), std::invalid_argument, "--shards must be a power of two");
  EXPECT_THROW_MSG(set_and_validate(t, "lr", "1e-3x"), std::invalid_argument, "--lr: '1e-3x' is not a number");
}

TEST(GptConfig, FormatsAndSchedulesAreParsedOnceIntoTheirEnums) {
  gpt::TrainConfig c;
  gpt::config_table().set_flag(c, "format", "text");
  gpt::config_table().set_flag(c, "schedule", "cosine");
  EXPECT_EQ(c.format, data::TextFormat::text);
  EXPECT_EQ(c.schedule, optim::Schedule::Kind::WarmupCosine);
  EXPECT_THROW_MSG(gpt::config_table().set_flag(c, "format", "poems"), std::invalid_argument,
                   "--format must be lines or text, got 'poems'");  // at the flag, before any validation
  nlohmann::json j = nlohmann::json::parse(c.to_json());
  EXPECT_EQ(j["format"], "text");
  EXPECT_EQ(j["schedule"], "cosine");
  j["format"] = "poems";
  EXPECT_THROW_MSG(gpt::TrainConfig::from_json(j.dump()), std::invalid_argument,
                   "config 'format' must be lines or text, got 'poems'");
}

// --tokenizer is parsed at the flag into its type; a character run's JSON has no key for it (as before the flag), and
// a config without the key (every older checkpoint's) reads as char.
TEST(GptConfig, TheTokenizerIsParsedAtTheFlagAndWrittenOnlyWhenNotChar) {
  gpt::TrainConfig c;
  EXPECT_FALSE(nlohmann::json::parse(c.to_json()).contains("tokenizer"));
  EXPECT_EQ(gpt::TrainConfig::from_json(kGptBeforeShards).tokenizer, data::TokenizerName{});
  gpt::config_table().set_flag(c, "tokenizer", "bpe:/data/kjv.model");
  EXPECT_EQ(c.tokenizer.kind, data::TokenizerName::Kind::bpe_file);
  EXPECT_EQ(c.tokenizer.path, "/data/kjv.model");
  EXPECT_EQ(nlohmann::json::parse(c.to_json())["tokenizer"], "bpe:/data/kjv.model");
  EXPECT_EQ(gpt::TrainConfig::from_json(c.to_json()).tokenizer, c.tokenizer);
  EXPECT_THROW_MSG(gpt::config_table().set_flag(c, "tokenizer", "bogus"), std::invalid_argument,
                   "--tokenizer must be char, gpt2 or bpe:FILE (a .model file), got 'bogus'");
  EXPECT_THROW_MSG(c.validate(), std::invalid_argument, "--tokenizer bpe:/data/kjv.model needs --format text");
  gpt::config_table().set_flag(c, "format", "text");
  EXPECT_NO_THROW(c.validate());
  // Resuming compares the tokens (Trainer::load), not the text: a .model file may move.
  gpt::TrainConfig moved = c;
  moved.tokenizer.path = "/elsewhere/kjv.model";
  EXPECT_TRUE(c.mismatched_for_resume(moved).empty());
}

// --weight-decay-on matrices (nanoGPT's two groups) is written only when set, read back, and a name it does not know
// is refused listing the two it does.
TEST(GptConfig, WeightDecayOnIsWrittenOnlyWhenSet) {
  gpt::TrainConfig c;
  EXPECT_FALSE(nlohmann::json::parse(c.to_json()).contains("weight_decay_on"));
  EXPECT_EQ(gpt::TrainConfig::from_json(kGptBeforeShards).weight_decay_on, optim::DecayOn::every_parameter);
  const auto& t = gpt::config_table();
  t.set_flag(c, "weight-decay-on", "matrices");
  EXPECT_EQ(nlohmann::json::parse(c.to_json())["weight_decay_on"], "matrices");
  EXPECT_EQ(gpt::TrainConfig::from_json(c.to_json()).weight_decay_on, optim::DecayOn::matrices);
  EXPECT_THROW_MSG(t.set_flag(c, "weight-decay-on", "biases"), std::invalid_argument, "--weight-decay-on must be all or matrices, got 'biases'");
}

// --beta2 and --min-lr (nanoGPT's knobs) are written only when set: a default run's checkpoint keeps its bytes, and an
// older config reads as the defaults; their bounds are checked naming the flag.
TEST(GptConfig, Beta2AndMinLrAreWrittenOnlyWhenSetAndCheckedNamingTheFlag) {
  gpt::TrainConfig c;
  const nlohmann::json defaults = nlohmann::json::parse(c.to_json());
  EXPECT_FALSE(defaults.contains("beta2"));
  EXPECT_FALSE(defaults.contains("min_lr"));
  EXPECT_EQ(gpt::TrainConfig::from_json(kGptBeforeShards).beta2, 0.99);
  EXPECT_EQ(gpt::TrainConfig::from_json(kGptBeforeShards).min_lr, 0.0);
  const auto& t = gpt::config_table();
  t.set_flag(c, "beta2", "0.95");
  t.set_flag(c, "schedule", "cosine");
  t.set_flag(c, "min-lr", "5e-5");
  EXPECT_NO_THROW(c.validate());
  const nlohmann::json j = nlohmann::json::parse(c.to_json());
  EXPECT_EQ(j["beta2"], 0.95);
  EXPECT_EQ(j["min_lr"], 5e-5);
  const gpt::TrainConfig back = gpt::TrainConfig::from_json(c.to_json());
  EXPECT_EQ(back.beta2, 0.95);
  EXPECT_EQ(back.min_lr, 5e-5);
  EXPECT_EQ(gpt::TrainConfig{}.mismatched_for_resume(back),
            (std::vector<std::string>{"beta2", "min_lr", "schedule"}));  // another optimisation: no resume
  EXPECT_THROW_MSG(set_and_validate(t, "beta2", "1"), std::invalid_argument, "--beta2 must be in [0, 1), got 1");
  EXPECT_THROW_MSG(set_and_validate(t, "min-lr", "-1e-4"), std::invalid_argument, "--min-lr must be a number >= 0");
  EXPECT_THROW_MSG(set_and_validate(t, "min-lr", "1e-4"), std::invalid_argument,
                   "--min-lr 0.0001 needs --schedule cosine");
  c.min_lr = 1e-2;  // above --lr 5e-4
  EXPECT_THROW_MSG(c.validate(), std::invalid_argument, "--min-lr 0.01 is above --lr 0.0005");
}

TEST(GptConfig, ResumeMayChangeStepsExceptUnderCosine) {
  gpt::TrainConfig a, b;
  b.steps = 4000, b.threads = 2, b.eval_every = 100;
  EXPECT_TRUE(a.mismatched_for_resume(b).empty());
  gpt::config_table().set_flag(a, "schedule", "cosine");
  gpt::config_table().set_flag(b, "schedule", "cosine");
  EXPECT_EQ(a.mismatched_for_resume(b), std::vector<std::string>{"steps"});
  b.model.n_embd = 32;
  EXPECT_EQ(a.mismatched_for_resume(b), (std::vector<std::string>{"d_model", "steps"}));  // as --d-model is typed
}

// A v1 checkpoint's config (the model's options under their flags' spellings, as models/reverse/trainer.cpp's upgrade
// reads it: every row), from before --shards and --warmup-steps.
TEST(ReverseConfig, AnOlderCheckpointsConfigLoadsWithTheNewKeysDefaults) {
  nlohmann::json j = nlohmann::json::parse(reverse::TrainConfig{}.to_json());
  j["d_model"] = 16, j["heads"] = 2, j["positions"] = 20;
  j.erase("shards");
  j.erase("warmup_steps");
  const reverse::TrainConfig c = train::run_config_from_json(reverse::config_table(), j.dump(),
                                                             ConfigTable<reverse::TrainConfig>::Keys::every_row);
  EXPECT_EQ(c.model.d_model, 16);
  EXPECT_EQ(c.model.n_heads, 2);
  EXPECT_EQ(c.model.max_len, 20);
  EXPECT_THROW_MSG(reverse::TrainConfig::from_json(j.dump()), std::invalid_argument,
                   "config has the key \"d_model\", which this program does not know");  // v2's config: the run's alone
  EXPECT_EQ(c.shards, train::kShardsBeforeTheFlag);  // absent: the 8 such a checkpoint has always resumed with
  EXPECT_EQ(c.warmup_steps, 0);
  EXPECT_NO_THROW(c.validate());
}

TEST(ReverseConfig, AWrongValueIsRefusedNamingTheFlag) {
  const auto& t = reverse::config_table();
  EXPECT_THROW_MSG(set_and_validate(t, "optimizer", "adagrad"), std::invalid_argument,
                   "--optimizer must be adam, adamw or sgd, got 'adagrad'");
  EXPECT_THROW_MSG(set_and_validate(t, "momentum", "1.5"), std::invalid_argument, "--momentum must be in [0, 1), got 1.5");
}

// Without --shards a run takes train::default_shards of its batch size and stores that; --shards wins; a stored
// count is kept (a resumed run's config is its checkpoint's).
template <typename Config>
void expect_shards_chosen_from_the_batch(const ConfigTable<Config>& table) {
  Config c;
  EXPECT_EQ(c.shards, 0);  // not chosen yet
  table.set_flag(c, "batch-size", "1");
  EXPECT_EQ(c.with_shards().shards, 1);
  table.set_flag(c, "batch-size", "64");
  const Config chosen = c.with_shards();
  EXPECT_EQ(chosen.shards, 2);
  EXPECT_EQ(nlohmann::json::parse(chosen.to_json())["shards"], 2);
  EXPECT_EQ(Config::from_json(chosen.to_json()).shards, 2);
  table.set_flag(c, "shards", "8");
  EXPECT_EQ(c.with_shards().shards, 8);
  table.set_flag(c, "shards", "0");  // --shards 0: the default, as when it is not given
  EXPECT_EQ(c.with_shards().shards, 2);
  EXPECT_NO_THROW(c.validate());
}

TEST(ReverseConfig, TheDefaultShardsFollowTheBatchAndTheFlagWins) {
  expect_shards_chosen_from_the_batch(reverse::config_table());
}

TEST(GptConfig, TheDefaultShardsFollowTheBatchAndTheFlagWins) {
  expect_shards_chosen_from_the_batch(gpt::config_table());
}

}  // namespace
}  // namespace cppgrad
