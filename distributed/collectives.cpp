#include "distributed/collectives.h"

#include <string>

#include "distributed/agreement.h"
#include "distributed/mpi_call.h"

namespace cppgrad::distributed {

// torch.distributed.all_reduce. The sum is MPI's (its algorithm, so its order of additions, is MPI's choice and may
// change with the world size and the message size); Open MPI gives every rank the same bits.
void all_reduce(const ProcessGroup& group, const Tensor& tensor, ReduceOp op) {
  Offer offer = offer_of(tensor, /*floating_only=*/true);
  offer.layout = LayoutHash().add(offer.layout).add(static_cast<std::int64_t>(op)).value();
  check_offers_agree(group, "all_reduce", offer);
  dispatch_floating(tensor.dtype(), "all_reduce", [&](auto zero) {
    using T = decltype(zero);
    T* data = tensor.mutable_data<T>();
    for_each_mpi_piece(tensor.numel(), [&](std::int64_t offset, int count) {
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + offset, count, mpi_floating_type(tensor.dtype()), MPI_SUM,
                              comm_of(group)),
                "all_reduce", "MPI_Allreduce");
    });
    if (op == ReduceOp::Mean) {
      const T n = static_cast<T>(group.world_size());
      for (std::int64_t i = 0; i < tensor.numel(); ++i) data[i] /= n;
    }
  });
}

// torch.distributed.broadcast.
void broadcast(const ProcessGroup& group, const Tensor& tensor, int src) {
  Offer offer = offer_of(tensor, /*floating_only=*/false);
  offer.layout = LayoutHash().add(offer.layout).add(src).value();
  if (offer.problem.empty() && (src < 0 || src >= group.world_size())) {
    offer.problem = "src " + std::to_string(src) + " is not a rank of this group (world size " +
                    std::to_string(group.world_size()) + ")";
  }
  check_offers_agree(group, "broadcast", offer);
  broadcast_bytes(group, tensor, src, "broadcast");
}

// torch.distributed.barrier.
void barrier(const ProcessGroup& group) { check_mpi(MPI_Barrier(comm_of(group)), "barrier", "MPI_Barrier"); }

}  // namespace cppgrad::distributed
