#include "distributed/parameters.h"

#include <string>

#include "distributed/agreement.h"
#include "distributed/mpi_call.h"

namespace cppgrad::distributed {

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
