// Both trainers under mpirun (issue 26): runs on 2 and 4 processes end with the same checkpoint (weights and the
// optimizer's state) and the same metrics (timing aside) as one process, bit for bit; a process that is killed ends
// the run within seconds, never a hang, and leaves the last checkpoint loadable. Built where MPI is found
// (tests/CMakeLists.txt passes mpiexec and its flags); every run here oversubscribes this machine's cores.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/cli/run_program.h"

namespace {

namespace fs = std::filesystem;
using cppgrad::test::Outcome;
using cppgrad::test::ProgramResult;
using ::testing::HasSubstr;

std::string quoted(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += " '" + a + "'";
  return s;
}

class MpirunCli : public ::testing::Test {
 public:
  void SetUp() override {
    dir_ = cppgrad::test::fresh_test_dir("cppgrad_mpirun_cli");
    // Open MPI refuses to start as root unless told (CI's container runs the tests as root).
    if (getuid() == 0) setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1), setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    std::ofstream words(dir_ / "words.txt");
    const char* syllables[] = {"ba", "ko", "tu", "ri", "ne", "sa", "lo", "mi"};
    unsigned x = 11;
    for (int i = 0; i < 600; ++i) {
      std::string half;
      for (int s = 0; s < 2; ++s) half += syllables[(x = x * 1103515245u + 12345u) >> 16 & 7];
      words << half << half << "\n";
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The program on one process, or on np under mpirun; each process on one thread unless args say otherwise.
  static ProgramResult run(int np, const char* binary, const std::vector<std::string>& args) {
    if (np == 0) return cppgrad::test::run_program(binary, quoted(args));
    // Open MPI's components leave what they allocated behind at MPI_Finalize, in frames LeakSanitizer cannot name
    // (tests/CMakeLists.txt, the distributed tests): no leak check for the processes mpirun starts.
    return cppgrad::test::run_program("/usr/bin/env", std::string("LSAN_OPTIONS=detect_leaks=0 '") + CPPGRAD_MPIEXEC +
                                                          "' -n " + std::to_string(np) + " " CPPGRAD_MPIEXEC_FLAGS " '" +
                                                          binary + "'" + quoted(args));
  }
  std::vector<std::string> gpt_args(const std::string& name, const std::string& threads) const {
    return {"train", "--data", path("words.txt"), "--d-model", "16", "--heads", "2", "--layers", "1", "--steps", "30",
            "--eval-every", "15", "--batch-size", "12", "--dropout", "0.1", "--threads", threads, "--samples", "0",
            "--quiet", "--save", path(name + ".safetensors"), "--metrics-out", path(name + ".jsonl")};
  }
  std::vector<std::string> reverse_args(const std::string& name, const std::string& threads) const {
    return {"train", "--epochs", "2", "--train-size", "192", "--test-size", "32", "--d-model", "16", "--heads", "2",
            "--d-ff", "24", "--min-len", "3", "--max-len", "6", "--dropout", "0.1", "--threads", threads, "--quiet",
            "--save", path(name + ".safetensors"), "--metrics-out", path(name + ".jsonl")};
  }
  Outcome outcome(const std::string& name, const std::vector<std::string>& timing) const {
    return cppgrad::test::run_outcome(path(name + ".safetensors"), path(name + ".jsonl"), timing);
  }

  fs::path dir_;
};

// mpirun -n 2 at the default shard count (2), and -n 4 at --shards 4, on one thread each ("np2", "np4"): each must end
// with the checkpoint and metrics of one process on 2 threads at the same shards ("one2", "one4"). args(name, threads)
// are the program's flags; `printed` gets what the mpirun runs printed.
void expect_processes_end_as_one(
    const MpirunCli& t, const char* binary,
    const std::function<std::vector<std::string>(const std::string&, const std::string&)>& args,
    const std::vector<std::string>& timing, std::vector<std::string>& printed) {
  for (const int np : {2, 4}) {
    const std::string n = std::to_string(np);
    const std::vector<std::string> shards = np == 2 ? std::vector<std::string>{} : std::vector<std::string>{"--shards", n};
    auto flags = [&](const std::string& name, const std::string& threads) {
      std::vector<std::string> a = args(name, threads);
      a.insert(a.end(), shards.begin(), shards.end());
      return a;
    };
    const ProgramResult one = MpirunCli::run(0, binary, flags("one" + n, "2"));
    ASSERT_EQ(one.status, 0) << one.out;
    const ProgramResult r = MpirunCli::run(np, binary, flags("np" + n, "1"));
    ASSERT_EQ(r.status, 0) << r.out;
    cppgrad::test::expect_same(t.outcome("one" + n, timing), t.outcome("np" + n, timing));
    printed.push_back(r.out);
  }
}

TEST_F(MpirunCli, GptOnTwoAndFourProcessesEndsAsOnOne) {
  std::vector<std::string> printed;
  expect_processes_end_as_one(
      *this, CPPGRAD_GPT_BIN, [&](const std::string& n, const std::string& th) { return gpt_args(n, th); },
      {"tokens_per_s", "elapsed_s", "train_wall_s"}, printed);
  ASSERT_EQ(printed.size(), 2u);
  for (const std::string& out : printed)
    EXPECT_EQ(out.find("done:"), out.rfind("done:")) << "only rank 0 prints:\n" << out;
}

// --dtype bfloat16: the same bits on any number of processes, as float32's (docs/bfloat16.md).
TEST_F(MpirunCli, ABfloat16GptOnTwoAndFourProcessesEndsAsOnOne) {
  std::vector<std::string> printed;
  expect_processes_end_as_one(
      *this, CPPGRAD_GPT_BIN,
      [&](const std::string& n, const std::string& th) {
        std::vector<std::string> a = gpt_args(n, th);
        a.insert(a.end(), {"--dtype", "bfloat16"});
        return a;
      },
      {"tokens_per_s", "elapsed_s", "train_wall_s"}, printed);
}

// A LoRA finetune (adapters with dropout on a frozen base): the same bits on any number of processes too.
TEST_F(MpirunCli, ALoRAFinetuneOnTwoAndFourProcessesEndsAsOnOne) {
  ASSERT_EQ(run(0, CPPGRAD_GPT_BIN, gpt_args("base", "2")).status, 0);
  std::vector<std::string> printed;
  expect_processes_end_as_one(
      *this, CPPGRAD_GPT_BIN,
      [&](const std::string& n, const std::string& th) {
        std::vector<std::string> a = gpt_args(n, th);
        a.insert(a.end(), {"--init", path("base.safetensors"), "--lora-rank", "2", "--lora-dropout", "0.1"});
        return a;
      },
      {"tokens_per_s", "elapsed_s", "train_wall_s"}, printed);
}

TEST_F(MpirunCli, ReversalOnTwoAndFourProcessesEndsAsOnOne) {
  std::vector<std::string> printed;
  expect_processes_end_as_one(
      *this, CPPGRAD_REVERSE_BIN, [&](const std::string& n, const std::string& th) { return reverse_args(n, th); },
      {"epoch_s", "train_wall_s"}, printed);
}

TEST_F(MpirunCli, ACheckpointSavedOnFourProcessesResumesOnOne) {
  // 30 steps on 4 processes, then 30 more on 1: the same as 60 on 1 (the checkpoint holds no process count; it holds
  // --shards 4, which the resumed run, naming none, keeps rather than taking the default).
  const std::vector<std::string> timing = {"tokens_per_s", "elapsed_s", "train_wall_s"};
  std::vector<std::string> unbroken = gpt_args("unbroken", "2");
  unbroken[std::find(unbroken.begin(), unbroken.end(), "30") - unbroken.begin()] = "60";
  unbroken.insert(unbroken.end(), {"--shards", "4"});
  ASSERT_EQ(run(0, CPPGRAD_GPT_BIN, unbroken).status, 0);
  std::vector<std::string> four = gpt_args("resumed", "1");
  four.insert(four.end(), {"--shards", "4"});
  const ProgramResult first = run(4, CPPGRAD_GPT_BIN, four);
  ASSERT_EQ(first.status, 0) << first.out;
  const ProgramResult second =
      run(0, CPPGRAD_GPT_BIN, {"train", "--resume", path("resumed.safetensors"), "--steps", "60", "--threads", "1",
                               "--samples", "0", "--quiet", "--save", path("resumed.safetensors"), "--metrics-out",
                               path("resumed.jsonl")});
  ASSERT_EQ(second.status, 0) << second.out;
  cppgrad::test::expect_same(outcome("unbroken", timing), outcome("resumed", timing));
}

TEST_F(MpirunCli, ACheckOfTheComparisonCanFail) {
  // Another shard count rounds differently: the comparison above would see it.
  const std::vector<std::string> timing = {"tokens_per_s", "elapsed_s", "train_wall_s"};
  ASSERT_EQ(run(0, CPPGRAD_GPT_BIN, gpt_args("two", "1")).status, 0);  // the default: 2 shards
  std::vector<std::string> four = gpt_args("four", "1");
  four.insert(four.end(), {"--shards", "4"});
  ASSERT_EQ(run(0, CPPGRAD_GPT_BIN, four).status, 0);
  EXPECT_NE(outcome("two", timing).weights, outcome("four", timing).weights);
}

TEST_F(MpirunCli, ProcessesThatCannotShareTheShardsAreRefused) {
  std::vector<std::string> args = gpt_args("x", "1");
  const ProgramResult r = run(4, CPPGRAD_GPT_BIN, args);  // the default: 2 shards
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("4 processes cannot share 2 shards"));
  EXPECT_THAT(r.out, HasSubstr("give --shards 4 or a larger power of two"));
  EXPECT_FALSE(fs::exists(path("x.safetensors")));
}

TEST_F(MpirunCli, ProcessesStartedWithDifferentFlagsAreRefused) {
  // Two application contexts in one mpirun (Open MPI's and MPICH's "A : B"): rank 1 is given another seed.
  std::vector<std::string> a = gpt_args("mixed", "1"), b = gpt_args("mixed", "1");
  b.insert(b.end(), {"--seed", "1"});
  const ProgramResult r = cppgrad::test::run_program(
      "/usr/bin/env", std::string("LSAN_OPTIONS=detect_leaks=0 '") + CPPGRAD_MPIEXEC + "' " CPPGRAD_MPIEXEC_FLAGS " -n 1 '" +
                          CPPGRAD_GPT_BIN + "'" + quoted(a) + " : -n 1 '" + CPPGRAD_GPT_BIN + "'" + quoted(b));
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("rank 1's configuration differs from rank 0's"));
  EXPECT_FALSE(fs::exists(path("mixed.safetensors")));
}

// The pids of a process's children (mpirun's: the ranks), from /proc.
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; f >> c;) out.push_back(c);
  return out;
}

TEST_F(MpirunCli, AKilledProcessEndsTheRunWithinSecondsAndTheCheckpointStaysLoadable) {
  std::vector<std::string> args = {"-n", "2"};
  std::istringstream flags(CPPGRAD_MPIEXEC_FLAGS);
  for (std::string f; flags >> f;) args.push_back(f);
  args.push_back(CPPGRAD_GPT_BIN);
  for (const auto& a : gpt_args("killed", "1")) args.push_back(a);
  args[std::find(args.begin(), args.end(), "30") - args.begin()] = "1000000";  // --steps: until killed
  setenv("LSAN_OPTIONS", "detect_leaks=0", 1);  // for the processes mpirun starts (see run above)
  const pid_t mpirun = cppgrad::test::start_program(CPPGRAD_MPIEXEC, args, path("mpirun.txt"));
  unsetenv("LSAN_OPTIONS");
  ASSERT_GT(mpirun, 0);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(path("killed.safetensors")) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<pid_t> ranks = children_of(mpirun);
  ASSERT_EQ(ranks.size(), 2u) << "mpirun's children";
  ASSERT_EQ(kill(ranks.back(), SIGKILL), 0);
  const auto killed_at = std::chrono::steady_clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(mpirun, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - killed_at < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (done == 0) kill(mpirun, SIGKILL), waitpid(mpirun, &status, 0);
  ASSERT_NE(done, 0) << "mpirun still running a minute after a rank was killed (a hang)";
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, std::chrono::seconds(30));
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const ProgramResult eval = run(0, CPPGRAD_GPT_BIN, {"eval", "--checkpoint", path("killed.safetensors")});
  EXPECT_EQ(eval.status, 0) << eval.out;
  EXPECT_THAT(eval.out, HasSubstr("perplexity"));
}

}  // namespace
