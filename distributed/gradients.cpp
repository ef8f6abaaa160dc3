#include "distributed/gradients.h"

#include <algorithm>
#include <string>

#include "distributed/agreement.h"
#include "distributed/mpi_call.h"

namespace cppgrad::distributed {
namespace {

std::size_t nbytes_of(const Tensor& t) { return static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype()); }

// One bucket of gradients of dtype T: into the flat buffer, one all-reduce, back divided by the world size.
template <typename T>
void average_bucket(const ProcessGroup& group, const std::vector<Tensor>& grads, Bucket bucket) {
  std::int64_t elements = 0;
  for (std::size_t i = bucket.begin; i < bucket.end; ++i) elements += grads[i].numel();
  const Tensor flat = Tensor::empty({elements}, dtype_of<T>());  // the allocator's cache keeps it for the next step
  T* buffer = flat.data<T>();
  for (std::size_t i = bucket.begin, at = 0; i < bucket.end; at += static_cast<std::size_t>(grads[i].numel()), ++i) {
    std::copy_n(grads[i].data<T>(), grads[i].numel(), buffer + at);
  }
  for_each_mpi_piece(elements, [&](std::int64_t offset, int count) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, buffer + offset, count, mpi_floating_type(dtype_of<T>()), MPI_SUM,
                            comm_of(group)),
              "average_gradients", "MPI_Allreduce");
  });
  const T n = static_cast<T>(group.world_size());
  for (std::size_t i = bucket.begin, at = 0; i < bucket.end; at += static_cast<std::size_t>(grads[i].numel()), ++i) {
    T* grad = grads[i].data<T>();
    for (std::int64_t k = 0; k < grads[i].numel(); ++k) grad[k] = buffer[at + static_cast<std::size_t>(k)] / n;
  }
}

}  // namespace

std::vector<Bucket> assign_buckets(const std::vector<Tensor>& tensors, std::size_t bucket_bytes) {
  std::vector<Bucket> buckets;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const bool fits = !buckets.empty() && tensors[i].dtype() == tensors[buckets.back().begin].dtype() &&
                      bytes + nbytes_of(tensors[i]) <= bucket_bytes;
    if (fits) {
      bytes += nbytes_of(tensors[i]);
      buckets.back().end = i + 1;
    } else {
      bytes = nbytes_of(tensors[i]);
      buckets.push_back({i, i + 1});
    }
  }
  return buckets;
}

// DDP's gradient all-reduce (torch/csrc/distributed/c10d/reducer.cpp), after backward rather than during it.
void average_gradients(const ProcessGroup& group, const std::vector<Tensor>& params, std::size_t bucket_bytes) {
  std::vector<Tensor> grads;
  for (const Tensor& p : params) grads.push_back(p.grad());
  Offer offer = offer_of_list("gradient", grads, /*floating_only=*/true);
  offer.layout = LayoutHash().add(offer.layout).add(static_cast<std::int64_t>(bucket_bytes)).value();
  if (offer.problem.empty() && bucket_bytes == 0) offer.problem = "bucket_bytes must be positive, got 0";
  check_offers_agree(group, "average_gradients", offer);
  std::erase_if(grads, [](const Tensor& g) { return !g.defined(); });
  for (const Bucket& bucket : assign_buckets(grads, bucket_bytes)) {
    dispatch_floating(grads[bucket.begin].dtype(), "average_gradients",
                      [&](auto zero) { average_bucket<decltype(zero)>(group, grads, bucket); });
  }
}

// DDP's _sync_module_states: rank src's parameters to every rank.
void broadcast_parameters(const ProcessGroup& group, const std::vector<Tensor>& params, int src) {
  Offer offer = offer_of_list("parameter", params, /*floating_only=*/false);
  offer.layout = LayoutHash().add(offer.layout).add(src).value();
  if (offer.problem.empty() && (src < 0 || src >= group.world_size())) {
    offer.problem = "src " + std::to_string(src) + " is not a rank of this group (world size " +
                    std::to_string(group.world_size()) + ")";
  }
  for (std::size_t i = 0; i < params.size() && offer.problem.empty(); ++i) {
    if (!params[i].defined()) offer.problem = "parameter " + std::to_string(i) + " is undefined";
  }
  check_offers_agree(group, "broadcast_parameters", offer);
  for (const Tensor& p : params) broadcast_bytes(group, p, src, "broadcast_parameters");
}

}  // namespace cppgrad::distributed
