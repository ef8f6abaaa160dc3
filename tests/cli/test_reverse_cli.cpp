// cppgrad-reverse on the command line: bad input exits 2 with one clear line, metrics have their schema,
// checkpoints round-trip, a run killed with SIGKILL and resumed ends exactly where an unbroken run ends, and so does
// one stopped by Ctrl-C mid-epoch.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cppgrad/version.h"
#include "core/safetensors.h"
#include "run_program.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using cppgrad::test::CliResult;
using cppgrad::test::slurp;

class ReverseCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = cppgrad::test::fresh_test_dir("cppgrad_cli");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  CliResult cli(const std::vector<std::string>& args) { return cppgrad::test::run_cli(CPPGRAD_REVERSE_BIN, args, dir_); }

  // A tiny configuration that trains in well under a second per epoch.
  static std::vector<std::string> tiny(std::vector<std::string> extra) {
    std::vector<std::string> a = {"train", "--vocab", "6", "--seq-len", "4", "--train-size", "256", "--test-size", "32",
                                  "--d-model", "16", "--heads", "2", "--encoder-layers", "1", "--decoder-layers", "1",
                                  "--d-ff", "16", "--batch-size", "32", "--lr", "0.01", "--threads", "1"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  fs::path dir_;
};

using cppgrad::test::expect_usage_error;

TEST_F(ReverseCli, BadFlagsAndValuesExitTwoWithOneLine) {
  expect_usage_error(cli({"train", "--no-such-flag"}), "no-such-flag");
  expect_usage_error(cli({"train", "--epochs", "lots"}), "lots");
  expect_usage_error(cli({"train", "--d-model", "30", "--heads", "4"}), "--heads 4 does not divide --d-model 30");
  expect_usage_error(cli({"train", "--seq-len", "60"}), "the position table has 50");
  expect_usage_error(cli({"train", "--vocab", "2"}), "--vocab must be in 3..100000, got 2");
  expect_usage_error(cli({"train", "--epochs", "-3"}), "--epochs must be in 1..1000000, got -3");
  expect_usage_error(cli({"train", "--vocab", "3", "--seq-len", "3", "--test-size", "20"}),
                     "only 8 distinct sequences exist");
  expect_usage_error(cli({"frobnicate"}), "unknown command 'frobnicate'");
}

TEST_F(ReverseCli, VersionIsTheProjectVersion) {
  const CliResult r = cli({"--version"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, std::string("cppgrad-reverse ") + CPPGRAD_VERSION + "\n");
}

TEST_F(ReverseCli, NumbersAreParsedStrictlyAndNamedWhenRefused) {
  expect_usage_error(cli(tiny({"--lr", "0.5abc"})), "--lr: '0.5abc' is not a number");
  expect_usage_error(cli(tiny({"--dropout", "0.1x"})), "--dropout: '0.1x' is not a number");
  expect_usage_error(cli(tiny({"--lr", "nan"})), "--lr: must be a finite number");
  expect_usage_error(cli(tiny({"--clip-grad", "inf"})), "--clip-grad: must be a finite number");
  expect_usage_error(cli(tiny({"--epochs", "5x"})), "--epochs: '5x' is not a whole number");
  expect_usage_error(cli(tiny({"--epochs", " 5"})), "--epochs: ' 5' is not a whole number");
  expect_usage_error(cli(tiny({"--epochs", "99999999999999999999"})), "--epochs: '99999999999999999999' is not a whole number");
  expect_usage_error(cli(tiny({"--seed", "-1"})), "--seed: '-1' is not a whole number from 0 to 2^64-1");
  expect_usage_error(cli(tiny({"--weight-decay", "-1"})), "--weight-decay must be a number >= 0");
  expect_usage_error(cli(tiny({"--dropout", "1"})), "--dropout must be in [0, 1)");
  expect_usage_error(cli(tiny({"--warmup-steps", "-5"})), "--warmup-steps must be in 0..");
  expect_usage_error(cli(tiny({"--grad-log", path("g.jsonl"), "--grad-log-every", "0"})), "--grad-log-every must be positive");
  expect_usage_error(cli({"eval", "--checkpoint", path("c.safetensors"), "--seed", "1e3"}), "--seed: '1e3' is not a whole number");
}

TEST_F(ReverseCli, SizesAreBoundedBeforeAnythingIsAllocated) {
  // Each of these asked for gigabytes (or overflowed) before; now each is refused at once, naming the flag.
  const auto start = std::chrono::steady_clock::now();
  expect_usage_error(cli(tiny({"--train-size", "2000000000"})), "--train-size must be in 1..1000000");
  expect_usage_error(cli(tiny({"--d-model", "1000000", "--heads", "1"})), "--d-model must be in 1..16384");
  expect_usage_error(cli(tiny({"--batch-size", "9223372036854775807"})), "--batch-size must be in 1..65536");
  expect_usage_error(cli(tiny({"--threads", "100000"})), "--threads must be in 0..256");
  expect_usage_error(cli(tiny({"--d-model", "16384", "--d-ff", "16384", "--heads", "1"})), "parameters, more than the limit");
  expect_usage_error(cli(tiny({"--batch-size", "65536", "--d-model", "1024", "--heads", "1"})),
                     "activations, more than the limit");
  expect_usage_error(cli(tiny({"--train-size", "1000000", "--seq-len", "1000", "--positions", "1002"})),
                     "tokens, more than the limit");
  expect_usage_error(cli(tiny({"--seq-len", "2000"})), "--seq-len must be in 1..1024");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  // The largest seed is a seed like any other.
  EXPECT_EQ(cli(tiny({"--epochs", "1", "--seed", "18446744073709551615"})).status, 0);
}

TEST_F(ReverseCli, MissingOrCorruptFilesExitTwo) {
  expect_usage_error(cli({"eval", "--checkpoint", path("nope.safetensors")}), "nope.safetensors");
  expect_usage_error(cli({"train", "--resume", path("nope.safetensors")}), "nope.safetensors");
  std::ofstream(path("junk.safetensors")) << "this is not a checkpoint";
  expect_usage_error(cli({"predict", "--checkpoint", path("junk.safetensors"), "1", "2"}), "junk.safetensors");
}

TEST_F(ReverseCli, MetricsHaveTheirSchemaAndTheModelLearns) {
  const CliResult r = cli(tiny({"--epochs", "8", "--metrics-out", path("m.jsonl"), "--plot", path("p.svg")}));
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream f(path("m.jsonl"));
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(f, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 9u);
  for (std::size_t i = 0; i < 8; ++i) {
    for (const char* key : {"epoch", "loss", "train_token_acc", "test_seq_acc", "test_token_acc", "lr", "epoch_s"})
      EXPECT_TRUE(lines[i].contains(key)) << key;
    EXPECT_EQ(lines[i]["epoch"], i + 1);
    for (const char* key : {"train_token_acc", "test_seq_acc", "test_token_acc"}) {
      EXPECT_GE(lines[i][key].get<double>(), 0.0);
      EXPECT_LE(lines[i][key].get<double>(), 1.0);
    }
  }
  const auto& final = lines.back();
  EXPECT_EQ(final["event"], "final");
  for (const char* key : {"test_seq_acc", "test_token_acc", "train_wall_s", "epochs", "params"})
    EXPECT_TRUE(final.contains(key)) << key;
  EXPECT_EQ(final["epochs"], 8);
  EXPECT_GE(final["test_seq_acc"].get<double>(), 0.9) << "greedy accuracy of the tiny run";
  EXPECT_TRUE(fs::file_size(path("p.svg")) > 100);
}

TEST_F(ReverseCli, VariableLengthsLearnToStop) {
  // Lengths 2..5: targets end in EOS, sources are padded and masked; greedy decoding must stop where it should.
  const CliResult r = cli({"train", "--vocab", "6", "--min-len", "2", "--max-len", "5", "--train-size", "1024",
                           "--test-size", "64", "--d-model", "32", "--heads", "2", "--encoder-layers", "1",
                           "--decoder-layers", "1", "--d-ff", "32", "--batch-size", "32", "--lr", "0.005", "--epochs",
                           "12", "--threads", "1", "--metrics-out", path("v.jsonl"), "--save", path("v.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream f(path("v.jsonl"));
  std::string line, last;
  while (std::getline(f, line)) last = line;
  EXPECT_GE(nlohmann::json::parse(last)["test_seq_acc"].get<double>(), 0.9);
  const CliResult p = cli({"predict", "--checkpoint", path("v.safetensors"), "4", "1", "3"});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("[4, 1, 3] -> [3, 1, 4]"));
}

TEST_F(ReverseCli, TraceGraphAndGradientLog) {
  const CliResult r = cli(tiny({"--epochs", "2", "--detect-anomaly", "--trace-graph", path("g.dot"), "--grad-log", path("g.jsonl"),
                                "--grad-log-every", "4"}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("|g| "));  // the epoch line's gradient-norm sparkline
  std::ifstream dot(path("g.dot"));
  const std::string d((std::istreambuf_iterator<char>(dot)), std::istreambuf_iterator<char>());
  EXPECT_THAT(d, HasSubstr("cross_entropy"));
  EXPECT_THAT(d, HasSubstr("decoder.0.cross_attn.W_q.weight"));
  EXPECT_THAT(d, HasSubstr("|grad| "));
  std::ifstream log(path("g.jsonl"));
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(log, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4u);  // 2 epochs x 8 steps, every 4th
  const auto& p = lines[0]["params"]["out.weight"];
  for (const char* key : {"grad_norm", "weight_norm", "update_ratio"}) EXPECT_GT(p[key].get<double>(), 0.0) << key;
}

TEST_F(ReverseCli, CheckpointEvalAndPredict) {
  ASSERT_EQ(cli(tiny({"--epochs", "8", "--save", path("c.safetensors")})).status, 0);
  const CliResult e = cli({"eval", "--checkpoint", path("c.safetensors"), "--seed", "3"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_THAT(e.out, HasSubstr("greedy accuracy on 32 fresh test sequences"));
  const CliResult p = cli({"predict", "--checkpoint", path("c.safetensors"), "--attention-svg", path("a.svg"), "1", "3", "5", "2"});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("[1, 3, 5, 2] -> "));
  EXPECT_THAT(p.out, HasSubstr("cross_attn"));
  EXPECT_TRUE(fs::exists(path("a.svg")));
  expect_usage_error(cli({"predict", "--checkpoint", path("c.safetensors"), "1", "3", "9", "2"}),
                     "token 9 is outside this model's vocabulary 1..5");
  expect_usage_error(cli({"predict", "--checkpoint", path("c.safetensors"), "1", "3"}), "sequences of length 4, got 2");
}

TEST_F(ReverseCli, RefusedCheckpointsOverwriteNothing) {
  ASSERT_EQ(cli(tiny({"--epochs", "1", "--save", path("c.safetensors")})).status, 0);
  const auto before = fs::last_write_time(path("c.safetensors"));
  const auto size = fs::file_size(path("c.safetensors"));
  // Another configuration.
  expect_usage_error(cli(tiny({"--epochs", "2", "--d-model", "32", "--resume", path("c.safetensors"), "--save",
                               path("c.safetensors")})),
                     "another configuration (d_model differ)");
  // Truncated.
  fs::copy_file(path("c.safetensors"), path("t.safetensors"));
  fs::resize_file(path("t.safetensors"), size / 2);
  expect_usage_error(cli(tiny({"--epochs", "2", "--resume", path("t.safetensors"), "--save", path("c.safetensors")})),
                     "t.safetensors");
  EXPECT_EQ(fs::last_write_time(path("c.safetensors")), before);
  EXPECT_EQ(fs::file_size(path("c.safetensors")), size);
}

// ---------------------------------------------------------------- nothing a user owns is lost

// Names of the files in dir that a crashed or failed write could have left: "*.tmp.*".
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().filename().string());
  return out;
}

TEST_F(ReverseCli, OutputsNeverReplaceAFifoOrADirectory) {
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  fs::create_directories(path("dir"));
  for (const char* flag : {"--save", "--plot", "--trace-graph"}) {
    SCOPED_TRACE(flag);
    expect_usage_error(cli(tiny({"--epochs", "1", flag, path("pipe")})), "it is a FIFO, not a regular file");
    expect_usage_error(cli(tiny({"--epochs", "1", flag, path("dir")})), "it is a directory");
  }
  for (const char* flag : {"--metrics-out", "--grad-log"}) {  // streams may write into a FIFO, never a directory
    SCOPED_TRACE(flag);
    expect_usage_error(cli(tiny({"--epochs", "1", flag, path("dir")})), "it is a directory");
  }
  EXPECT_TRUE(fs::is_fifo(path("pipe")));
  EXPECT_TRUE(fs::is_directory(path("dir")));
  EXPECT_THAT(temporaries(dir_), ::testing::IsEmpty());
}

TEST_F(ReverseCli, MetricsStreamIntoStdoutLineByLine) {
  const CliResult r = cli(tiny({"--epochs", "2", "--quiet", "--metrics-out", "/dev/stdout"}));
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  int epochs = 0, finals = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;
    const auto j = nlohmann::json::parse(line);
    if (j.contains("event")) ++finals;
    else EXPECT_EQ(j.at("epoch").get<int>(), ++epochs);
  }
  EXPECT_EQ(epochs, 2) << "each epoch's line once, in order:\n" << r.out;
  EXPECT_EQ(finals, 1);
}

TEST_F(ReverseCli, MetricsStreamIntoAFifo) {
  // A reader on the other end of a named pipe gets each epoch's line once; the FIFO stays a FIFO.
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(path("pipe"));
    received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  const CliResult r = cli(tiny({"--epochs", "2", "--quiet", "--metrics-out", path("pipe")}));
  // Had the program never opened the pipe, the reader would still wait in open(): release it either way.
  if (const int fd = ::open(path("pipe").c_str(), O_WRONLY | O_NONBLOCK); fd >= 0) ::close(fd);
  reader.join();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(received.begin(), received.end(), '\n'), 3) << received;  // 2 epochs, then the final line
  EXPECT_THAT(received, HasSubstr("\"event\":\"final\""));
  EXPECT_TRUE(fs::is_fifo(path("pipe")));
}

TEST_F(ReverseCli, TwoOutputsOnOneFileAreRefusedBeforeAnythingIsWritten) {
  expect_usage_error(cli(tiny({"--epochs", "1", "--save", path("x"), "--metrics-out", path("x")})),
                     "--save " + path("x") + " and --metrics-out " + path("x") + " name the same file");
  EXPECT_FALSE(fs::exists(path("x")));
  // The same file through a symlink, and through a hard link.
  ASSERT_EQ(cli(tiny({"--epochs", "1", "--save", path("good.safetensors")})).status, 0);
  const auto size = fs::file_size(path("good.safetensors"));
  fs::create_symlink(path("good.safetensors"), path("alias"));
  fs::create_hard_link(path("good.safetensors"), path("hard"));
  expect_usage_error(cli(tiny({"--epochs", "1", "--save", path("good.safetensors"), "--plot", path("alias")})),
                     "name the same file");
  expect_usage_error(cli(tiny({"--epochs", "1", "--save", path("hard"), "--grad-log", path("good.safetensors")})),
                     "name the same file");
  // An output over the checkpoint being resumed (only --save may name it).
  expect_usage_error(cli(tiny({"--epochs", "2", "--resume", path("good.safetensors"), "--metrics-out", path("alias")})),
                     "names the checkpoint being resumed");
  EXPECT_EQ(fs::file_size(path("good.safetensors")), size);
  EXPECT_EQ(cli({"eval", "--checkpoint", path("good.safetensors")}).status, 0);
}

TEST_F(ReverseCli, EmptyOutputPathsAreRefused) {
  expect_usage_error(cli(tiny({"--epochs", "1", "--save", ""})), "--save needs a path");
  expect_usage_error(cli(tiny({"--epochs", "1", "--metrics-out", ""})), "--metrics-out needs a path");
}

TEST_F(ReverseCli, OutputsAreCheckedBeforeTrainingStarts) {
  const CliResult r = cli(tiny({"--epochs", "1", "--plot", path("no/such/dir/p.svg")}));
  expect_usage_error(r, "its directory");
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("epoch"))) << "nothing may train before the outputs are known good";
}

TEST_F(ReverseCli, ADivergedRunStopsAndKeepsTheLastGoodCheckpoint) {
  ASSERT_EQ(cli(tiny({"--epochs", "1", "--save", path("c.safetensors")})).status, 0);
  const std::string good = [&] {
    std::ifstream f(path("c.safetensors"), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }();
  const CliResult r = cli(tiny({"--epochs", "3", "--lr", "1e30", "--save", path("c.safetensors"), "--metrics-out",
                                path("m.jsonl")}));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.status, 2) << "a diverged run is not a usage error";
  EXPECT_THAT(r.err, HasSubstr("training diverged: the loss is"));
  EXPECT_THAT(r.err, HasSubstr("at epoch 1, step"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::ifstream f(path("c.safetensors"), std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()), good)
      << "the last good checkpoint must not be replaced";
  EXPECT_EQ(cli({"eval", "--checkpoint", path("c.safetensors")}).status, 0);
  EXPECT_THAT(temporaries(dir_), ::testing::IsEmpty());
}

TEST_F(ReverseCli, ResumingACheckpointThatIsAlreadyDoneSaysSo) {
  ASSERT_EQ(cli(tiny({"--epochs", "2", "--save", path("c.safetensors")})).status, 0);
  expect_usage_error(cli(tiny({"--epochs", "2", "--resume", path("c.safetensors")})),
                     "the checkpoint has trained 2 epochs already and --epochs is 2: nothing to do");
  expect_usage_error(cli(tiny({"--epochs", "1", "--resume", path("c.safetensors")})), "nothing to do");
}

TEST_F(ReverseCli, SweepTrainsEveryCombinationAndPlotsTheirLosses) {
  const CliResult r = cli({"sweep", "--heads", "1,2", "--attention", "scaled_dot,multiplicative", "--vocab", "6",
                           "--seq-len", "4", "--train-size", "256", "--test-size", "32", "--d-model", "16", "--epochs",
                           "2", "--threads", "1", "--plot", path("s.svg")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("epochs→99%"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 4 + 1) << r.out;  // header, 4 runs, "wrote"
  std::ifstream f(path("s.svg"));
  const std::string svg((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t polylines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  EXPECT_EQ(polylines, 4u);
  expect_usage_error(cli({"sweep", "--heads", "1,x"}), "--heads: 'x' is not a number");
  expect_usage_error(cli({"sweep", "--heads", "3", "--d-model", "32"}), "does not divide");
}

TEST_F(ReverseCli, SweepShowsEachRunsProgressOnATerminal) {
  const std::vector<std::string> args = {"sweep", "--heads", "1,2", "--vocab", "6", "--seq-len", "4", "--train-size",
                                         "256", "--test-size", "32", "--d-model", "16", "--epochs", "2", "--threads",
                                         "1", "--plot", path("s.svg")};
  const cppgrad::test::ProgramResult r = cppgrad::test::run_program_in_terminal(CPPGRAD_REVERSE_BIN, args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("run 1/2 heads=1 scaled_dot ["));
  EXPECT_THAT(r.out, HasSubstr("run 2/2 heads=2 scaled_dot ["));
  EXPECT_THAT(r.out, HasSubstr("] 8/8  loss")) << "a bar runs to the run's last step: 4 steps x 2 epochs";
  const CliResult piped = cli(args);  // off a terminal the output is the table alone, for logs
  ASSERT_EQ(piped.status, 0) << piped.err;
  EXPECT_THAT(piped.out, ::testing::Not(HasSubstr("run 1/2")));
  EXPECT_EQ(piped.out.find('\r'), std::string::npos);
}

TEST_F(ReverseCli, PredictHelpNamesItsTokens) {
  const CliResult r = cli({"predict", "--help"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cppgrad-reverse predict --checkpoint PATH [OPTION...] TOKENS...\n"));
  EXPECT_THAT(r.out, HasSubstr("TOKENS: the sequence"));
}

TEST_F(ReverseCli, ThreadsAboveTheCoresAreNotedOnceAndStillRun) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0 || cores >= 256) GTEST_SKIP() << "needs a known core count below --threads' bound of 256";
  const std::string over = std::to_string(cores + 1);
  const CliResult r = cli(tiny({"--epochs", "1", "--quiet", "--threads", over}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::StartsWith("note: --threads " + over + " is more than this machine's " +
                                           std::to_string(cores) + " cores; "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done: 1 epochs"));
  const CliResult at_cores = cli(tiny({"--epochs", "1", "--quiet", "--threads", std::to_string(cores)}));
  ASSERT_EQ(at_cores.status, 0) << at_cores.err;
  EXPECT_EQ(at_cores.err, "");
}

TEST_F(ReverseCli, TutorialArchitectureCopiesInsteadOfReversing) {
  // Trained with the target as its own decoder input, the tutorial's model scores high when given the target
  // again and near zero when it is not.
  const CliResult r = cli({"train", "--arch", "tutorial", "--vocab", "6", "--seq-len", "4", "--train-size", "512",
                           "--test-size", "64", "--d-model", "16", "--heads", "2", "--epochs", "6", "--lr", "0.01",
                           "--threads", "1", "--metrics-out", path("t.jsonl")});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string needle = "tutorial's way (target given to the decoder): test sequence accuracy ";
  const auto tutorial = r.out.find(needle);
  ASSERT_NE(tutorial, std::string::npos) << r.out;
  const double tutorial_acc = std::stod(r.out.substr(tutorial + needle.size(), 6));
  EXPECT_GE(tutorial_acc, 90.0);
  std::ifstream f(path("t.jsonl"));
  std::string line, last;
  while (std::getline(f, line)) last = line;
  EXPECT_LE(nlohmann::json::parse(last)["test_seq_acc"].get<double>(), 0.1) << "the honest accuracy";
  expect_usage_error(cli({"train", "--arch", "tutorial", "--save", path("x.safetensors")}), "not available with --arch tutorial");
}

using cppgrad::test::expect_same;
using cppgrad::test::Outcome;

// Model tensors and the per-epoch metrics that do not depend on timing.
Outcome outcome(const std::string& checkpoint, const std::string& metrics) {
  return cppgrad::test::run_outcome(checkpoint, metrics, {"epoch_s", "train_wall_s"});
}

TEST_F(ReverseCli, KilledAndResumedRunEndsExactlyLikeAnUnbrokenOne) {
  const std::vector<std::string> flags = {"--epochs", "5", "--dropout", "0.1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = flags;
    a.insert(a.end(), extra.begin(), extra.end());
    return tiny(a);
  };
  ASSERT_EQ(cli(with({"--save", path("a.safetensors"), "--metrics-out", path("a.jsonl")})).status, 0);

  // Start the same run, SIGKILL it as soon as its first checkpoint exists (mid-training), then resume.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::vector<std::string> args = with({"--save", path("b.safetensors"), "--metrics-out", path("b.jsonl")});
    std::vector<char*> argv = {const_cast<char*>(CPPGRAD_REVERSE_BIN)};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    freopen("/dev/null", "w", stdout);
    execv(CPPGRAD_REVERSE_BIN, argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);  // as wait_for's
  while (!fs::exists(path("b.safetensors")) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(fs::exists(path("b.safetensors")));
  const CliResult resumed = cli(with({"--resume", path("b.safetensors"), "--save", path("b.safetensors"), "--metrics-out",
                                path("b.jsonl")}));
  ASSERT_EQ(resumed.status, 0) << resumed.err;

  expect_same(outcome(path("a.safetensors"), path("a.jsonl")), outcome(path("b.safetensors"), path("b.jsonl")));
}

// Starts cppgrad-reverse with args in the background, its standard output and error going to `out`.
pid_t start(const std::vector<std::string>& args, const std::string& out) {
  return cppgrad::test::start_program(CPPGRAD_REVERSE_BIN, args, out);
}

// Waits until `path` exists (the run's first checkpoint: training is under way), at most five minutes: an epoch
// takes well under a second in a Release build, but over a minute under the sanitizers on a busy machine, and a
// signal sent before the epoch ends lands in the wrong one.
void wait_for(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (!fs::exists(path) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}


// Sends the signals to a child started with start(), one right after another, and waits for it to end: its exit
// status (-1 when a signal ended it) and what it printed into `out`.
CliResult stop_with(pid_t child, const std::vector<int>& signals, const std::string& out) {
  for (const int signal : signals) kill(child, signal);
  int raw = 0;
  CliResult r;
  if (waitpid(child, &raw, 0) == child && WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  r.out = slurp(out);
  return r;
}

// Epochs of 1250 steps (about 0.4 s on a 2024 core), two threads and dropout: a stop lands mid-epoch, and the
// replicas' dropout masks must come back exactly.
std::vector<std::string> long_epochs(std::vector<std::string> extra) {
  std::vector<std::string> a = {"train", "--train-size", "20000", "--test-size", "64", "--d-model", "16", "--heads", "2",
                                "--encoder-layers", "1", "--decoder-layers", "1", "--d-ff", "16", "--batch-size", "16",
                                "--lr", "0.01", "--epochs", "2", "--dropout", "0.1", "--threads", "2",
                                // two shards of 8 rows: these tests are about signals, and 8 shards of 2 rows make
                                // an epoch four times the ops (over a minute in the sanitizer build)
                                "--shards", "2"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST_F(ReverseCli, CtrlCSavesMidEpochAndTheResumedRunEndsExactlyLikeAnUnbrokenOne) {
  ASSERT_EQ(cli(long_epochs({"--save", path("a.safetensors"), "--metrics-out", path("a.jsonl")})).status, 0);

  // The same run, sent SIGINT a little after its first checkpoint (epoch 1 done): it stops between two steps of
  // epoch 2, saves, says how to resume, and exits 130.
  const pid_t child = start(long_epochs({"--save", path("b.safetensors"), "--metrics-out", path("b.jsonl")}), path("b.out"));
  ASSERT_GT(child, 0);
  wait_for(path("b.safetensors"));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto [status, out, err] = stop_with(child, {SIGINT}, path("b.out"));
  EXPECT_EQ(status, 130) << out;
  const std::string resume = "cppgrad-reverse train --resume " + path("b.safetensors") + " --save " + path("b.safetensors");
  EXPECT_THAT(out, HasSubstr("stopped by SIGINT in epoch 2 after step "));
  EXPECT_THAT(out, HasSubstr("; saved to " + path("b.safetensors") + ": resume with " + resume + "\n"));
  const std::int64_t step = std::stoll(out.substr(out.find("after step ") + 11));
  EXPECT_GT(step, 0) << "the stop should land mid-epoch";
  EXPECT_LT(step, 1250) << "the stop should land mid-epoch";
  EXPECT_EQ(cppgrad::read_safetensors(path("b.safetensors")).metadata.count("epoch_progress"), 1u);

  // Resumed by the line's command (and the metrics stream): the same weights and metrics as the unbroken run.
  const CliResult resumed = cli({"train", "--resume", path("b.safetensors"), "--save", path("b.safetensors"),
                                 "--metrics-out", path("b.jsonl")});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("resumed in epoch 2 after step " + std::to_string(step) + " of 1250"));
  expect_same(outcome(path("a.safetensors"), path("a.jsonl")), outcome(path("b.safetensors"), path("b.jsonl")));
}

TEST_F(ReverseCli, SigtermWithoutSaveSaysSoAndExits143) {
  const pid_t child = start(long_epochs({"--metrics-out", path("m.jsonl")}), path("out"));
  ASSERT_GT(child, 0);
  wait_for(path("m.jsonl"));  // epoch 1 written: training is under way
  const auto [status, out, err] = stop_with(child, {SIGTERM}, path("out"));
  EXPECT_EQ(status, 143) << out;
  EXPECT_THAT(out, HasSubstr("stopped by SIGTERM in epoch 2 after step "));
  EXPECT_THAT(out, HasSubstr("nothing saved (no --save), so it cannot be resumed"));
}

TEST_F(ReverseCli, ASecondSignalStopsAtOnceAndTheCheckpointStaysWhole) {
  const pid_t child = start(long_epochs({"--save", path("c.safetensors")}), path("out"));
  ASSERT_GT(child, 0);
  wait_for(path("c.safetensors"));
  const auto [status, out, err] = stop_with(child, {SIGINT, SIGINT}, path("out"));
  EXPECT_EQ(status, 130) << out;
  // Whichever moment the signals met, the checkpoint is a whole file of this run (epoch 1's, or the stop's).
  const auto meta = cppgrad::read_safetensors(path("c.safetensors")).metadata;
  EXPECT_EQ(meta.at("format"), "cppgrad-reverse-checkpoint-v2");
}

}  // namespace
