#include "distributed/tree_sum.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <string>

#include "distributed/agreement.h"
#include "distributed/mpi_call.h"

namespace cppgrad::distributed {
namespace {

// The two buffers of a tree sum, kept for the next call on this thread (one per step): a model's gradients are
// megabytes (12.8 MB for the GPT's large configuration), and new buffers every step cost their pages' faults and
// zeroing, measured at more than the step's arithmetic. Their contents never outlive a call.
std::vector<std::byte>& scratch(int which) {
  thread_local std::vector<std::byte> buffers[2];
  return buffers[which];
}

// One part of the buffer: the values of the tensors of one dtype, from byte `offset`, `elements` of them. The float64
// part comes first, the float32 one after it, so each starts aligned for its type (operator new aligns the buffer).
template <typename T>
struct Part {
  std::vector<Tensor> tensors;
  std::size_t offset = 0;
  std::int64_t elements = 0;
  T* in(std::vector<std::byte>& buffer) const { return reinterpret_cast<T*>(buffer.data() + offset); }
};

template <typename T>
void pack(const Part<T>& part, std::vector<std::byte>& buffer) {
  T* at = part.in(buffer);
  for (const Tensor& t : part.tensors) at = std::copy(t.data<T>(), t.data<T>() + t.numel(), at);
}

template <typename T>
void unpack(const Part<T>& part, std::vector<std::byte>& buffer) {
  const T* at = part.in(buffer);
  for (const Tensor& t : part.tensors) {
    std::copy(at, at + t.numel(), t.mutable_data<T>());
    at += t.numel();
  }
}

// One level's additions, lower + upper on both ranks: the same additions, so the same bits.
template <typename T>
void add_level(const Part<T>& part, std::vector<std::byte>& mine, std::vector<std::byte>& theirs, bool lower) {
  T* m = part.in(mine);
  const T* t = part.in(theirs);
  for (std::int64_t i = 0; i < part.elements; ++i) m[i] = lower ? m[i] + t[i] : t[i] + m[i];
}

}  // namespace

// The defined tensors packed into one buffer (float64 values, then float32), exchanged whole at each level (one
// MPI_Sendrecv of bytes, whatever the dtypes), summed level by level in each dtype, unpacked.
void tree_sum(const ProcessGroup& group, const std::vector<Tensor>& tensors) {
  Offer offer = offer_of_list("tensor", tensors, /*floating_only=*/true);
  if (offer.problem.empty() && !std::has_single_bit(static_cast<unsigned>(group.world_size())))
    offer.problem = "the world size must be a power of two (the tree pairs ranks), got " +
                    std::to_string(group.world_size());
  check_offers_agree(group, "tree_sum", offer);
  Part<double> f64;
  Part<float> f32;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    if (t.dtype() == DType::Float64) f64.tensors.push_back(t), f64.elements += t.numel();
    else f32.tensors.push_back(t), f32.elements += t.numel();
  }
  f32.offset = static_cast<std::size_t>(f64.elements) * sizeof(double);
  const std::size_t bytes = f32.offset + static_cast<std::size_t>(f32.elements) * sizeof(float);
  if (bytes == 0) return;
  std::vector<std::byte>& mine = scratch(0);
  std::vector<std::byte>& theirs = scratch(1);
  mine.resize(bytes), theirs.resize(bytes);
  pack(f64, mine), pack(f32, mine);
  const int rank = group.rank();
  for (int level = 1; level < group.world_size(); level *= 2) {
    const int partner = rank ^ level;
    for_each_mpi_piece(static_cast<std::int64_t>(bytes), [&](std::int64_t offset, int count) {
      check_mpi(MPI_Sendrecv(mine.data() + offset, count, MPI_BYTE, partner, level, theirs.data() + offset, count,
                             MPI_BYTE, partner, level, comm_of(group), MPI_STATUS_IGNORE),
                "tree_sum", "MPI_Sendrecv");
    });
    add_level(f64, mine, theirs, rank < partner);
    add_level(f32, mine, theirs, rank < partner);
  }
  unpack(f64, mine), unpack(f32, mine);
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
