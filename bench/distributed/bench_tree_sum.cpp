// The all-reduce bandwidth the README's scale-out prediction stands on: times distributed::tree_sum (what the
// trainers send: recursive doubling, log2(N) exchanges of the whole buffer per rank) and distributed::all_reduce
// (one MPI_Allreduce, whatever algorithm Open MPI picks) on one float32 buffer of --elements values, the size of the
// GPT's large config's gradients (3.2M parameters). Run it under mpirun (a power-of-two process count):
//
//   mpirun -np 2 ./build/bin/cppgrad-bench-tree-sum                  # rank 0 prints one line per collective
//   mpirun -np 4 --oversubscribe ./build/bin/cppgrad-bench-tree-sum --elements 3200000 --reps 20
//
// Per collective: the median time of --reps calls (each after a barrier, so every rank starts together), the
// buffer's bytes over that time ("algbw", as nccl-tests names it) and the bytes one process sends over that time:
// tree_sum sends 4 P log2(N) bytes, a ring all-reduce 2 * 4 P (N - 1) / N. Both include the packing, the additions
// and the unpacking, as a training step pays them. On one machine the processes talk through shared memory, so the
// figure is this machine's memory path, not a network's.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/collectives.h"
#include "distributed/process_group.h"
#include "distributed/tree_sum.h"

using namespace cppgrad;

namespace {

struct Options {
  std::int64_t elements = 3'200'000;
  int reps = 10;
};

std::int64_t positive_flag(const char* name, const char* value) {
  char* end = nullptr;
  const long long v = std::strtoll(value, &end, 10);
  if (end == value || *end != '\0' || v < 1)
    throw std::invalid_argument(std::string(name) + " must be a positive integer, got '" + value + "'");
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value (flags: --elements N --reps R)");
    if (flag == "--elements") {
      o.elements = positive_flag("--elements", argv[++i]);
    } else if (flag == "--reps") {
      o.reps = static_cast<int>(std::min<std::int64_t>(positive_flag("--reps", argv[++i]), 1000));
    } else {
      throw std::invalid_argument("unknown flag " + flag + " (flags: --elements N --reps R)");
    }
  }
  return o;
}

// The median of `reps` timed calls (seconds), each started together on every rank; two untimed calls first.
double median_seconds(const distributed::ProcessGroup& group, int reps, const std::function<void()>& call) {
  for (int i = 0; i < 2; ++i) call();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    distributed::barrier(group);
    const auto start = std::chrono::steady_clock::now();
    call();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  distributed::ProcessGroup group;
  const int N = group.world_size();
  const Tensor buffer = Tensor::full({o.elements}, 1.0 / (group.rank() + 1));  // float32, like the gradients
  const double bytes = 4.0 * static_cast<double>(o.elements);
  const double tree_sent = bytes * std::bit_width(static_cast<unsigned>(N) - 1);  // log2(N) for a power of two
  const double ring_sent = 2.0 * bytes * (N - 1) / N;

  const double tree = median_seconds(group, o.reps, [&] { distributed::tree_sum(group, {buffer}); });
  const double ring = median_seconds(group, o.reps, [&] { distributed::all_reduce(group, buffer); });
  if (group.rank() == 0) {
    std::printf("%d processes, %lld float32 (%.1f MB), median of %d calls\n", N, static_cast<long long>(o.elements),
                bytes / 1e6, o.reps);
    std::printf("tree_sum    %8.2f ms  algbw %6.2f GB/s  sent per process %6.1f MB (4 P log2 N)  %6.2f GB/s\n",
                tree * 1e3, bytes / tree / 1e9, tree_sent / 1e6, tree_sent / tree / 1e9);
    std::printf("all_reduce  %8.2f ms  algbw %6.2f GB/s  sent per process %6.1f MB (ring: 8 P (N-1)/N)  %6.2f GB/s\n",
                ring * 1e3, bytes / ring / 1e9, ring_sent / 1e6, ring_sent / ring / 1e9);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cppgrad-bench-tree-sum: %s\n", e.what());
  return 2;
}
