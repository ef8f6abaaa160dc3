// The distributed tests' main: one ProcessGroup for the whole run, the GoogleTest suite on every rank, and the rank's
// verdict as its exit status, so that mpirun exits non-zero when any rank failed. Rank 0 prints GoogleTest's report
// and, at the end, how many ranks failed (its own report may say PASSED); the other ranks print their failures alone,
// each line prefixed with the rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cppgrad/distributed.h"  // the umbrella, compiled here: ProcessGroup and all_reduce
#include "tests/distributed/group.h"

namespace cppgrad::test {
namespace {

const distributed::ProcessGroup* the_group = nullptr;
int the_expected_world_size = 0;

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed()) std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
  }

 private:
  int rank_;
};

}  // namespace

const distributed::ProcessGroup& group() { return *the_group; }
int expected_world_size() { return the_expected_world_size; }

}  // namespace cppgrad::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // leaves the arguments that are not GoogleTest's
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--world-size=", 0) == 0) cppgrad::test::the_expected_world_size = std::atoi(arg.c_str() + 13);
  }
  cppgrad::distributed::ProcessGroup group;
  cppgrad::test::the_group = &group;
  if (group.rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new cppgrad::test::RankFailurePrinter(group.rank()));
  }
  const int status = RUN_ALL_TESTS();
  const cppgrad::Tensor failed = cppgrad::Tensor::full({1}, status != 0 ? 1.0 : 0.0, cppgrad::DType::Float64);
  cppgrad::distributed::all_reduce(group, failed);
  if (group.rank() == 0 && failed.item<double>() > 0) {
    std::fprintf(stderr, "%.0f of %d ranks had failures (each printed its own, prefixed [rank r])\n",
                 failed.item<double>(), group.world_size());
  }
  return status;
}
