// The browser page's engine, driven natively: web::Session must train exactly as cppgrad-gpt's trainer does (the page
// promises the same numbers as `cppgrad-gpt train`), read attention and samples as the commands do, round-trip its
// checkpoints, and the graph JSON must carry the gradients backward() gives.
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "data/token_labels.h"
#include "core/safetensors.h"
#include "data/bpe.h"
#include "models/gpt/checkpoint.h"
#include "models/gpt/trainer.h"
#include "test_paths.h"
#include "test_util.h"
#include "web/graph_json.h"
#include "web/session.h"

namespace cppgrad {
namespace {

// 300 short "words" of a few letters: a vocabulary of <b> and a..h.
std::string small_text() {
  std::string text;
  Generator gen(7);
  for (int i = 0; i < 300; ++i) {
    const std::int64_t n = 2 + static_cast<std::int64_t>(gen.next_u64() % 5);
    for (std::int64_t j = 0; j < n; ++j) text += static_cast<char>('a' + gen.next_u64() % 8);
    text += '\n';
  }
  return text;
}

struct SmallRun {
  test::TempDir dir;
  std::string data = (dir.path / "words.txt").string();
  SmallRun() { std::ofstream(data) << small_text(); }
  std::string config(std::int64_t steps, std::uint64_t seed = 3) const {
    return nlohmann::json{{"data", data}, {"steps", steps}, {"eval_every", 3}, {"n_layer", 2}, {"heads", 2},
                          {"d_model", 16}, {"batch_size", 8}, {"seed", seed}}
        .dump();
  }
};

std::vector<double> losses(const web::TrainChunk& c) {
  std::vector<double> out;
  for (const auto& s : c.steps) out.push_back(s.loss);
  return out;
}

TEST(WebSession, TrainsTheStepsAndEvaluationsOfCppgradGptTrain) {
  SmallRun run;
  web::Session page(run.config(6));
  const web::SessionInfo info = page.info();
  EXPECT_EQ(info.vocab, 9);  // <b> and a..h
  EXPECT_EQ(info.context, 7);  // the longest line (6) + 1
  EXPECT_EQ(info.steps_done, 0);
  EXPECT_EQ(info.max_steps, 6);
  EXPECT_EQ(info.tokens_per_step, 8 * 7);
  EXPECT_GT(info.bigram_val_loss, 0);
  EXPECT_EQ(info.command, "cppgrad-gpt train --data " + run.data +
                              " --d-model 16 --heads 2 --layers 2 --steps 6 --batch-size 8 --seed 3 --eval-every 3");
  // The boxes of the page read the config itself, every key of it, not the command line.
  const nlohmann::json shown = nlohmann::json::parse(info.config_json);
  EXPECT_EQ(shown["seed"], 3);
  EXPECT_EQ(shown["steps"], 6);
  EXPECT_EQ(shown["lr"], gpt::TrainConfig{}.lr);
  EXPECT_EQ(shown["format"], "lines");

  const web::TrainChunk first = page.train(2), rest = page.train(100);
  ASSERT_EQ(first.steps.size(), 2u);
  EXPECT_EQ(first.steps[1].step, 2);
  EXPECT_TRUE(first.evals.empty());
  EXPECT_FALSE(first.done);
  ASSERT_EQ(rest.steps.size(), 4u);  // no further than --steps
  EXPECT_TRUE(rest.done);
  ASSERT_EQ(rest.evals.size(), 2u);
  EXPECT_EQ(rest.evals[0].step, 3);
  EXPECT_EQ(rest.evals[1].step, 6);

  // The same config run by the trainer cppgrad-gpt train runs: the same losses, bit for bit.
  gpt::TrainConfig config = web::config_from_json(run.config(6));
  gpt::Trainer native(config);
  std::vector<double> native_losses;
  std::vector<double> native_val;
  native.run([&](std::int64_t, double loss, double) { native_losses.push_back(loss); },
             [&](const gpt::Evaluation& e) { native_val.push_back(e.val_loss); }, nullptr);
  std::vector<double> page_losses = losses(first);
  for (const double l : losses(rest)) page_losses.push_back(l);
  EXPECT_EQ(page_losses, native_losses);
  EXPECT_EQ(native_val, (std::vector<double>{rest.evals[0].val_loss, rest.evals[1].val_loss}));

  // Another seed is another run: the comparison above can fail.
  web::Session other(run.config(6, /*seed=*/4));
  EXPECT_NE(losses(other.train(6)), native_losses);
}

// The page's "products in" select is the config's dtype: a bfloat16 run is `cppgrad-gpt train --dtype bfloat16`, the
// same losses bit for bit (the page's portable kernel gives a CPU's bits: tests/core/test_gemm_bf16.cpp), and not the
// float32 run's, so the comparison can fail.
TEST(WebSession, TrainsInBfloat16AsTrainDtypeDoes) {
  SmallRun run;
  nlohmann::json config = nlohmann::json::parse(run.config(4));
  config["dtype"] = "bfloat16";
  web::Session page(config.dump());
  EXPECT_NE(page.info().command.find(" --dtype bfloat16"), std::string::npos) << page.info().command;
  EXPECT_EQ(nlohmann::json::parse(page.info().config_json)["dtype"], "bfloat16");
  const std::vector<double> page_losses = losses(page.train(4));
  gpt::Trainer native(web::config_from_json(config.dump()));
  std::vector<double> native_losses;
  native.run([&](std::int64_t, double loss, double) { native_losses.push_back(loss); }, nullptr, nullptr);
  EXPECT_EQ(page_losses, native_losses);
  web::Session float32(run.config(4));
  EXPECT_FALSE(nlohmann::json::parse(float32.info().config_json).contains("dtype"));  // the default is not written
  EXPECT_NE(losses(float32.train(4)), page_losses);
}

TEST(WebSession, AFinishedRunTrainsOnAsResumeWithMoreStepsDoes) {
  SmallRun run;
  web::Session page(run.config(6));
  ASSERT_TRUE(page.train(100).done);
  page.grow_steps(10);
  EXPECT_EQ(page.info().max_steps, 10);
  EXPECT_THAT(page.info().command, testing::HasSubstr("--steps 10"));
  EXPECT_EQ(nlohmann::json::parse(page.info().config_json)["steps"], 10);
  const web::TrainChunk more = page.train(100);
  ASSERT_EQ(more.steps.size(), 4u);
  EXPECT_TRUE(more.done);

  // Natively: train --steps 6 --save, then train --resume with --steps 10.
  const std::string ckpt = (run.dir.path / "six.ckpt").string();
  gpt::Trainer six(web::config_from_json(run.config(6)));
  six.run(nullptr, nullptr, nullptr);
  six.save(ckpt);
  gpt::Trainer ten(web::config_from_json(run.config(10)));
  ten.load(ckpt);
  std::vector<double> resumed;
  ten.run([&](std::int64_t, double loss, double) { resumed.push_back(loss); }, nullptr, nullptr);
  EXPECT_EQ(losses(more), resumed);
  EXPECT_EQ(more.evals.back().val_loss, ten.history().back().val_loss);

  EXPECT_THROW_MSG(page.grow_steps(10), std::invalid_argument, "--steps 10: the run has done 10 steps");
  EXPECT_THROW_MSG(page.grow_steps(0), std::invalid_argument, "--steps");
  nlohmann::json cosine = nlohmann::json::parse(run.config(6));
  cosine["schedule"] = "cosine";
  web::Session decaying(cosine.dump());
  EXPECT_THROW_MSG(decaying.grow_steps(10), std::invalid_argument, "cannot grow under --schedule cosine");
}

TEST(WebSession, ReadsTheConfigStrictly) {
  EXPECT_EQ(web::config_from_json("{}").steps, gpt::TrainConfig{}.steps);
  EXPECT_EQ(web::config_from_json("{}").shards, 2);  // train's default for a batch of 32, not an old checkpoint's 8
  EXPECT_EQ(web::config_from_json(R"({"n_embd": 32, "n_head": 2})").model.n_embd, 32);
  EXPECT_THROW_MSG(web::config_from_json(R"({"stpes": 5})"), std::invalid_argument, "config has the key \"stpes\", which this program does not know");
  EXPECT_THROW_MSG(web::config_from_json(R"({"layers": 2, "n_layer": 3})"), std::invalid_argument, "config gives both 'n_layer' and 'layers': give one");
  EXPECT_THROW_MSG(web::config_from_json(R"({"steps": 0})"), std::invalid_argument, "--steps");
  EXPECT_THROW_MSG(web::config_from_json("[1]"), std::invalid_argument, "not a JSON object");
  gpt::TrainConfig dropped;
  dropped.data = std::string(web::kDroppedDir) + "my words.txt";
  dropped.lr = 1e-3;
  EXPECT_EQ(web::train_command(dropped), "cppgrad-gpt train --data 'my words.txt' --lr 0.001");
}

TEST(WebSession, AttentionMapsOfAWordAreCausalAndNormalised) {
  SmallRun run;
  web::Session page(run.config(2));
  page.train(1);
  const web::AttentionView a = page.attention("abc");
  EXPECT_EQ(a.tokens, (std::vector<std::string>{"<b>", "a", "b", "c"}));
  ASSERT_EQ(a.layers, 2);
  ASSERT_EQ(a.heads, 2);
  ASSERT_EQ(a.T, 4);
  ASSERT_EQ(a.maps.size(), 2u * 2 * 4 * 4);
  for (std::int64_t map = 0; map < 4; ++map)
    for (std::int64_t i = 0; i < 4; ++i) {
      double row = 0;
      for (std::int64_t j = 0; j < 4; ++j) {
        const float w = a.maps[static_cast<std::size_t>((map * 4 + i) * 4 + j)];
        if (j > i) {
          EXPECT_EQ(w, 0.0f) << "a query reads a later key";
        }
        row += w;
      }
      EXPECT_NEAR(row, 1.0, 1e-5);
    }
  EXPECT_THROW_MSG(page.attention("abz"), std::invalid_argument, "the character 'z' (U+007A) is not in");
  EXPECT_THROW_MSG(page.attention("abcdefgh"), std::invalid_argument, "the model reads at most 7");
  page.train(1);  // training goes on after a read in evaluation mode
  EXPECT_EQ(page.info().steps_done, 2);
}

TEST(WebSession, SamplesCarryTheExplainTable) {
  SmallRun run;
  web::Session page(run.config(3));
  page.train(3);
  const web::SampleRequest request{.num = 3, .sampling = {.temperature = 0.8, .top_k = 3, .top_p = 1.0}, .seed = 5,
                                   .prompt = "ab"};
  const std::vector<web::Sample> samples = page.samples(request);
  ASSERT_EQ(samples.size(), 3u);
  for (const web::Sample& s : samples) {
    EXPECT_TRUE(s.text.starts_with("ab")) << s.text;
    ASSERT_FALSE(s.steps.empty());
    EXPECT_LE(std::ssize(s.steps), 7 - 3 + 1);  // the rest of the line, and the boundary that ends it
    for (const web::SampleStep& step : s.steps) {
      ASSERT_EQ(step.raw_top.size(), 5u);
      for (std::size_t i = 1; i < 5; ++i) EXPECT_GE(step.raw_top[i - 1].prob, step.raw_top[i].prob);
      int kept = 0;
      for (const auto& c : step.filtered_top) kept += c.prob > 0;
      EXPECT_LE(kept, 3);  // top-k 3
      EXPECT_GT(step.prob, 0);
    }
  }
  const std::vector<web::Sample> again = page.samples(request);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(again[i].text, samples[i].text);  // the seed decides
  web::SampleRequest bad = request;
  bad.num = 0;
  EXPECT_THROW_MSG(page.samples(bad), std::invalid_argument, "num must be in");
  bad = request;
  bad.sampling.temperature = -1;
  EXPECT_THROW_MSG(page.samples(bad), std::invalid_argument, "--temperature");
  bad = request;
  bad.prompt = "aq";
  EXPECT_THROW_MSG(page.samples(bad), std::invalid_argument, "'q'");
  bad.prompt = "abcabc";  // <b> and 6 characters fill the context of 7: no room for the rest of the line
  EXPECT_THROW_MSG(page.samples(bad), std::invalid_argument, "the prompt has 6 characters; this model's lines hold at most 6");
  bad.prompt = "abcab";  // one short of it: the line may take one more character
  EXPECT_EQ(page.samples(bad).size(), 3u);
}

TEST(WebSession, ACheckpointRoundTripsAndResumesExactly) {
  SmallRun run;
  web::Session page(run.config(8));
  page.train(5);
  const std::string path = (run.dir.path / "page.ckpt").string();
  page.save(path);
  const std::unique_ptr<web::Session> loaded = web::Session::from_checkpoint(path);
  EXPECT_EQ(loaded->info().steps_done, 5);
  EXPECT_EQ(loaded->info().command, page.info().command);
  EXPECT_EQ(losses(loaded->train(3)), losses(page.train(3)));

  // The trainer cppgrad-gpt eval reads it with gives the validation loss the page reported.
  page.save(path);
  const gpt::LoadedModel m = gpt::load_model(path);
  const data::TextCorpus corpus = gpt::read_corpus(m.config, m.context, m.tokenizer);
  gpt::Trainer& t = page.trainer();
  EXPECT_EQ(gpt::split_loss(*m.model, corpus, true).loss, t.history().back().val_loss);

  const std::string junk = (run.dir.path / "junk.ckpt").string();
  std::ofstream(junk) << "not a checkpoint";
  EXPECT_THROW_MSG(web::Session::from_checkpoint(junk), std::runtime_error, junk);
  std::filesystem::remove(run.data);
  EXPECT_THROW_MSG(web::Session::from_checkpoint(path), std::runtime_error, "which the page does not have");
}

// The page keeps each step's loss in its checkpoints (kStepLossesKey), so one loaded back draws its curve; native
// cppgrad-gpt reads past the key, and a checkpoint without it (native, older) loads with its evaluations alone.
TEST(WebSession, ACheckpointBringsItsStepsLossesWhichCppgradGptReadsPast) {
  SmallRun run;
  web::Session page(run.config(8));
  page.train(5);
  const std::string path = (run.dir.path / "page.ckpt").string();
  page.save(path);
  ASSERT_EQ(read_safetensors(path).metadata.count(web::kStepLossesKey), 1u);
  const std::unique_ptr<web::Session> loaded = web::Session::from_checkpoint(path);
  ASSERT_EQ(loaded->step_losses().size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(loaded->step_losses()[i].step, page.step_losses()[i].step);
    EXPECT_EQ(loaded->step_losses()[i].loss, page.step_losses()[i].loss);  // the same bits, through JSON
  }
  ASSERT_EQ(loaded->evaluations().size(), 1u);  // --eval-every 3
  EXPECT_EQ(loaded->evaluations()[0].val_loss, page.evaluations()[0].val_loss);
  loaded->train(2);
  EXPECT_EQ(loaded->step_losses().size(), 7u);
  EXPECT_EQ(loaded->step_losses().back().step, 7);

  // Native: eval's reader and --resume take the page's checkpoint as any other.
  EXPECT_EQ(gpt::read_gpt_checkpoint(path).step, 5);
  gpt::Trainer resumed(web::config_from_json(run.config(8)));
  resumed.load(path);
  EXPECT_EQ(resumed.step(), 5);

  // Native train's checkpoint has no such key: its evaluations come, no steps' losses.
  const std::string native = (run.dir.path / "native.ckpt").string();
  resumed.save(native);
  ASSERT_EQ(read_safetensors(native).metadata.count(web::kStepLossesKey), 0u);
  const std::unique_ptr<web::Session> from_native = web::Session::from_checkpoint(native);
  EXPECT_TRUE(from_native->step_losses().empty());
  EXPECT_EQ(from_native->evaluations().size(), 1u);

  // Anyone's file: a value not of the page's shape is refused, naming the file and the key.
  const SafetensorsFile file = read_safetensors(path);
  const std::string bad = (run.dir.path / "bad.ckpt").string();
  for (const char* value : {"not json", R"({"first_step": 2, "losses": [1, 2, 3, 4, 5]})",
                                  R"({"first_step": 1, "losses": [1, 2, "x", 4, 5]})", R"({"first_step": -1, "losses": []})",
                                  R"({"first_step": 1, "losses": [1, 2, 3, 4, 5, 6]})"}) {
    auto metadata = file.metadata;
    metadata[web::kStepLossesKey] = value;
    write_safetensors(bad, file.tensors, metadata);
    EXPECT_THROW_MSG(web::Session::from_checkpoint(bad), std::runtime_error,
                     "checkpoint " + bad + ": metadata '" + std::string(web::kStepLossesKey) + "'");
  }
}

// A step whose loss is not finite ends the run in the page's words, and the weights it leaves are neither drawn,
// sampled nor saved.
TEST(WebSession, ADivergedRunSaysSoAndRefusesItsMapsSamplesAndCheckpoint) {
  SmallRun run;
  nlohmann::json config = nlohmann::json::parse(run.config(20));
  config["lr"] = 1e9;
  web::Session page(config.dump());
  EXPECT_THROW_MSG(page.train(20), std::runtime_error, "Try a smaller learning rate, then press Reset");
  EXPECT_THROW_MSG(page.train(1), std::runtime_error, "press Reset to start a new run");
  EXPECT_THROW_MSG(page.attention("ab"), std::runtime_error, "training diverged at step");
  EXPECT_THROW_MSG(page.samples({}), std::runtime_error, "training diverged at step");
  const std::string path = (run.dir.path / "diverged.ckpt").string();
  EXPECT_THROW_MSG(page.save(path), std::runtime_error, "training diverged at step");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(WebSession, ABpeCheckpointTrainsOnWithTheBpeItCarriesAndShowsItsTokens) {
  // A BPE model trained as `cppgrad-gpt train --tokenizer bpe:FILE --format text` does, its .model file then gone:
  // the page has only the checkpoint and the text.
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sat on the mat and the dog sat on the log. ";
  const std::string data = (dir.path / "story.txt").string(), model = (dir.path / "story.model").string();
  std::ofstream(data) << text;
  const auto bpe = data::BpeTokenizer::train(text, 270);
  bpe.save(model);
  const std::string config = nlohmann::json{{"data", data}, {"format", "text"}, {"tokenizer", "bpe:" + model},
                                            {"context", 8}, {"steps", 8}, {"eval_every", 4}, {"n_layer", 1},
                                            {"heads", 2}, {"d_model", 16}, {"batch_size", 4}, {"seed", 3}}
                                .dump();
  web::Session page(config);
  EXPECT_EQ(page.info().vocab, 270);
  page.train(4);
  const std::string path = (dir.path / "bpe.ckpt").string();
  page.save(path);
  std::filesystem::remove(model);

  const std::unique_ptr<web::Session> loaded = web::Session::from_checkpoint(path);
  EXPECT_EQ(loaded->info().vocab, 270);
  EXPECT_EQ(loaded->info().steps_done, 4);
  EXPECT_EQ(losses(loaded->train(4)), losses(page.train(4)));

  // Attention and --explain's table label BPE tokens, not characters: " sat" is fewer tokens than characters.
  const data::Tokenizer tok(bpe);
  const std::vector<std::int64_t> ids = bpe.encode_ordinary("the cat");
  ASSERT_LT(ids.size(), std::string("the cat").size());
  const web::AttentionView a = loaded->attention("the cat");
  std::vector<std::string> want;
  for (const std::int64_t id : ids) want.push_back(data::token_label(tok, id));
  EXPECT_EQ(a.tokens, want);
  EXPECT_EQ(a.T, std::ssize(ids));
  web::SampleRequest r;
  r.num = 1, r.seed = 5, r.prompt = "the";
  const std::vector<web::Sample> samples = loaded->samples(r);
  ASSERT_EQ(samples.size(), 1u);
  for (const web::SampleStep& step : samples[0].steps) {
    const auto is_label = [&](const std::string& label) {
      for (std::int64_t id = 0; id < tok.size(); ++id)
        if (data::token_label(tok, id) == label) return true;
      return false;
    };
    EXPECT_TRUE(is_label(step.token)) << step.token;
  }
}

const nlohmann::json& node_labelled(const nlohmann::json& graph, const std::string& label) {
  for (const auto& n : graph["nodes"])
    if (n["label"] == label) return n;
  throw std::runtime_error("no node labelled " + label);
}

TEST(WebGraph, TheExpressionCarriesMicrogradsGradients) {
  const nlohmann::json g = nlohmann::json::parse(web::lesson_graph_json(web::LessonGraph::expression));
  const nlohmann::json& root = g["nodes"][0];
  EXPECT_EQ(root["op"], "tanh");
  EXPECT_EQ(root["label"], "o");
  const double o = root["value"][0];
  EXPECT_NEAR(o, 1.0 / std::sqrt(2.0), 1e-15);
  EXPECT_EQ(root["grad"][0], 1.0);
  // do/dw1 = x1 (1 - o^2), do/dx1 = w1 (1 - o^2), ...: the analytic gradients, from the values in the graph.
  const double dn = 1 - o * o;
  const auto value = [&](const std::string& l) { return node_labelled(g, l)["value"][0].get<double>(); };
  const auto grad = [&](const std::string& l) { return node_labelled(g, l)["grad"][0].get<double>(); };
  EXPECT_NEAR(grad("w1"), value("x1") * dn, 1e-12);
  EXPECT_NEAR(grad("x1"), value("w1") * dn, 1e-12);
  EXPECT_NEAR(grad("w2"), value("x2") * dn, 1e-12);
  EXPECT_NEAR(grad("x2"), value("w2") * dn, 1e-12);
  EXPECT_NEAR(grad("b"), dn, 1e-12);
  EXPECT_NEAR(grad("n"), dn, 1e-12);
  EXPECT_NEAR(grad("w1"), 1.0, 1e-12);  // micrograd's numbers
  EXPECT_NEAR(grad("x1"), -1.5, 1e-12);
  // Every edge joins two nodes, and every op's inputs lead to it.
  const std::size_t n = g["nodes"].size();
  EXPECT_EQ(n, 10u);  // 5 leaves, 2 mul, 2 add, tanh
  for (const auto& e : g["edges"]) {
    EXPECT_LT(e[0].get<std::size_t>(), n);
    EXPECT_LT(e[1].get<std::size_t>(), n);
  }
  EXPECT_THROW_MSG(web::parse_lesson_graph("neuron"), std::invalid_argument, "'neuron'");
}

TEST(WebGraph, TheHeadHasItsOpsShapesAndGradients) {
  const nlohmann::json g = nlohmann::json::parse(web::lesson_graph_json(web::LessonGraph::head));
  std::set<std::string> ops;
  for (const auto& node : g["nodes"]) ops.insert(node["op"].get<std::string>());
  // mean() is a sum times 1/n.
  for (const char* op : {"matmul", "softmax", "where", "sum"}) EXPECT_TRUE(ops.count(op)) << op;
  // The projections, the scores and the weights carry the names the lesson uses, not only their ops.
  for (const char* name : {"q", "k", "v", "scores"}) {
    const nlohmann::json& n = node_labelled(g, name);
    EXPECT_EQ(n["shape"], nlohmann::json::array({3, std::string(name) == "scores" ? 3 : 4})) << name;
  }
  EXPECT_EQ(node_labelled(g, "q")["op"], "matmul");
  const nlohmann::json& wq = node_labelled(g, "Wq");
  EXPECT_EQ(wq["shape"], nlohmann::json::array({4, 4}));
  EXPECT_EQ(wq["value"].size(), 16u);
  EXPECT_EQ(wq["grad"].size(), 16u);
  // The attention weights: [3, 3], causal, rows summing to 1.
  const nlohmann::json& att = node_labelled(g, "att");
  EXPECT_EQ(att["op"], "softmax");
  const std::vector<double> w = att["value"].get<std::vector<double>>();
  ASSERT_EQ(w.size(), 9u);
  EXPECT_EQ(w[1], 0.0);
  EXPECT_EQ(w[2], 0.0);
  EXPECT_EQ(w[0], 1.0);
  EXPECT_NEAR(w[3] + w[4], 1.0, 1e-12);
  // The loss is mean(y * y) over y [3, 4]: its gradient at y is 2 y / 12.
  const nlohmann::json& y = node_labelled(g, "y");
  EXPECT_EQ(y["op"], "matmul");
  EXPECT_EQ(node_labelled(g, "loss")["id"], 0);
  const std::vector<double> yv = y["value"], yg = y["grad"];
  ASSERT_EQ(yv.size(), 12u);
  ASSERT_EQ(yg.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) EXPECT_NEAR(yg[i], 2 * yv[i] / 12, 1e-15);
}

}  // namespace
}  // namespace cppgrad
