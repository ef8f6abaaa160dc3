#include "distributed/tree_sum.h"

#include <bit>
#include <string>

#include "distributed/agreement.h"
#include "distributed/mpi_call.h"

namespace cppgrad::distributed {
namespace {

// The two buffers of a tree sum, kept for the next call on this thread (one per step): a model's gradients are
// megabytes (12.8 MB for the GPT's large configuration), and new buffers every step cost their pages' faults and
// zeroing, measured at more than the step's arithmetic. Their contents never outlive a call.
template <typename T>
std::vector<T>& scratch(int which) {
  thread_local std::vector<T> buffers[2];
  return buffers[which];
}

// The defined tensors of one dtype, packed into one buffer, exchanged and summed level by level, unpacked.
template <typename T>
void tree_sum_of(const ProcessGroup& group, const std::vector<Tensor>& tensors) {
  std::int64_t elements = 0;
  for (const Tensor& t : tensors) elements += t.numel();
  if (elements == 0) return;
  std::vector<T>& mine = scratch<T>(0);
  std::vector<T>& theirs = scratch<T>(1);
  mine.resize(static_cast<std::size_t>(elements)), theirs.resize(static_cast<std::size_t>(elements));
  std::int64_t at = 0;
  for (const Tensor& t : tensors) {
    std::copy(t.data<T>(), t.data<T>() + t.numel(), mine.data() + at);
    at += t.numel();
  }
  const int rank = group.rank();
  for (int level = 1; level < group.world_size(); level *= 2) {
    const int partner = rank ^ level;
    for_each_mpi_piece(elements, [&](std::int64_t offset, int count) {
      check_mpi(MPI_Sendrecv(mine.data() + offset, count, mpi_floating_type(dtype_of<T>()), partner, level,
                             theirs.data() + offset, count, mpi_floating_type(dtype_of<T>()), partner, level,
                             comm_of(group), MPI_STATUS_IGNORE),
                "tree_sum", "MPI_Sendrecv");
    });
    // lower + upper on both ranks: the same additions, so the same bits
    const bool lower = rank < partner;
    for (std::int64_t i = 0; i < elements; ++i) mine[i] = lower ? mine[i] + theirs[i] : theirs[i] + mine[i];
  }
  at = 0;
  for (const Tensor& t : tensors) {
    std::copy(mine.data() + at, mine.data() + at + t.numel(), t.data<T>());
    at += t.numel();
  }
}

}  // namespace

void tree_sum(const ProcessGroup& group, const std::vector<Tensor>& tensors) {
  Offer offer = offer_of_list("tensor", tensors, /*floating_only=*/true);
  if (offer.problem.empty() && !std::has_single_bit(static_cast<unsigned>(group.world_size())))
    offer.problem = "the world size must be a power of two (the tree pairs ranks), got " +
                    std::to_string(group.world_size());
  check_offers_agree(group, "tree_sum", offer);
  std::vector<Tensor> f32, f64;
  for (const Tensor& t : tensors)
    if (t.defined()) (t.dtype() == DType::Float64 ? f64 : f32).push_back(t);
  tree_sum_of<float>(group, f32);
  tree_sum_of<double>(group, f64);
}

std::vector<double> all_gather(const ProcessGroup& group, const std::vector<double>& values) {
  Offer offer;
  offer.elements = static_cast<std::int64_t>(values.size());
  offer.layout = LayoutHash().add(offer.elements).value();
  offer.described = std::to_string(values.size()) + " values";
  check_offers_agree(group, "all_gather", offer);
  std::vector<double> all(values.size() * static_cast<std::size_t>(group.world_size()));
  if (values.empty()) return all;
  check_mpi(MPI_Allgather(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, all.data(),
                          static_cast<int>(values.size()), MPI_DOUBLE, comm_of(group)),
            "all_gather", "MPI_Allgather");
  return all;
}

}  // namespace cppgrad::distributed
