#include "distributed/agreement.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "distributed/mpi_call.h"

namespace cppgrad::distributed {

LayoutHash& LayoutHash::add(std::int64_t word) {
  for (int byte = 0; byte < 8; ++byte) {
    hash_ ^= (static_cast<std::uint64_t>(word) >> (8 * byte)) & 0xff;
    hash_ *= 1099511628211ull;
  }
  return *this;
}

LayoutHash& LayoutHash::add(const Tensor& t) {
  add(t.dim());
  for (std::int64_t size : t.shape()) add(size);
  return add(static_cast<std::int64_t>(t.dtype()));
}

Offer offer_of(const Tensor& t, bool floating_only) {
  if (!t.defined()) return {.problem = "the tensor is undefined", .described = "undefined"};
  Offer offer{.elements = t.numel(), .layout = LayoutHash().add(t).value(),
              .described = shape_str(t.shape()) + " " + dtype_name(t.dtype())};
  if (!t.is_contiguous()) {
    offer.problem = "expected a contiguous tensor, got a view " + offer.described + " with strides " +
                    shape_str(t.strides()) + " (call contiguous() first)";
  } else if (floating_only && !is_floating(t.dtype())) {
    offer.problem = "expected a float32 or float64 tensor, got " + offer.described;
  }
  return offer;
}

// Every rank sends {usable, elements, layout}; all see all, so all reach the same verdict and throw together.
void check_offers_agree(const ProcessGroup& group, const char* fn, const Offer& mine) {
  const int n = group.world_size();
  const std::int64_t sent[3] = {mine.problem.empty() ? 1 : 0, mine.elements, mine.layout};
  std::vector<std::int64_t> all(3 * static_cast<std::size_t>(n));
  check_mpi(MPI_Allgather(sent, 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T, comm_of(group)), fn, "MPI_Allgather");
  const std::string here = " (this is rank " + std::to_string(group.rank()) + ": " + mine.described + ")";
  if (!mine.problem.empty()) throw std::invalid_argument(std::string(fn) + ": " + mine.problem);
  for (int r = 0; r < n; ++r) {
    const std::int64_t* theirs = &all[3 * static_cast<std::size_t>(r)];
    if (theirs[0] == 0) {
      throw std::invalid_argument(std::string(fn) + ": rank " + std::to_string(r) +
                                  " refused its own tensors (its message says why)" + here);
    }
    if (theirs[1] != all[1]) {
      throw std::invalid_argument(std::string(fn) + ": the tensors differ between ranks: rank 0 has " +
                                  std::to_string(all[1]) + " elements, rank " + std::to_string(r) + " has " +
                                  std::to_string(theirs[1]) + here);
    }
    if (theirs[2] != all[2]) {
      throw std::invalid_argument(std::string(fn) + ": the tensors differ between ranks: rank " + std::to_string(r) +
                                  " has another shape, dtype or root than rank 0, with as many elements (" +
                                  std::to_string(theirs[1]) + ")" + here);
    }
  }
}

Offer offer_of_list(const char* what, const std::vector<Tensor>& tensors, bool floating_only) {
  Offer offer;
  LayoutHash layout;
  layout.add(static_cast<std::int64_t>(tensors.size()));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    layout.add(tensors[i].defined() ? 1 : 0);
    if (!tensors[i].defined()) continue;
    const Offer one = offer_of(tensors[i], floating_only);
    layout.add(one.layout);
    offer.elements += one.elements;
    if (offer.problem.empty() && !one.problem.empty()) offer.problem = fmt::format("{} {}: {}", what, i, one.problem);
  }
  offer.layout = layout.value();
  offer.described = std::to_string(tensors.size()) + " " + what + "s, " + std::to_string(offer.elements) + " elements";
  return offer;
}

}  // namespace cppgrad::distributed
