#pragma once
// Inside the distributed layer only: before a collective, every rank tells every other what it brings (one
// MPI_Allgather of three integers each). A rank whose tensor is unusable (not contiguous, a dtype the call does not
// take) throws with its own message, and every other rank throws too, naming it, instead of waiting forever in a
// collective that rank never enters; tensors that differ between ranks (MPI would reduce mismatched buffers, or
// truncate) are refused on every rank. PyTorch checks the same before its collectives (Gloo: "Tensor size mismatch").
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"

namespace cppgrad::distributed {

// FNV-1a over 64-bit words: what must be equal on every rank (shapes, dtypes, a root rank), folded into one number.
class LayoutHash {
 public:
  LayoutHash& add(std::int64_t word);
  LayoutHash& add(const Tensor& t);  // its shape and dtype
  std::int64_t value() const { return static_cast<std::int64_t>(hash_); }

 private:
  std::uint64_t hash_ = 14695981039346656037ull;
};

// What this rank brings to a collective: `problem` is empty when its tensors are usable, else why not (the message
// without the function's name); `elements` and `layout` must be equal on every rank; `described` names this rank's
// tensors in the messages ("[3, 4] float32").
struct Offer {
  std::string problem = {};
  std::int64_t elements = 0;
  std::int64_t layout = 0;
  std::string described = {};
};

// Collective: every rank of `group` must call it with the same `fn`. Returns when every rank's offer is usable and
// equal to rank 0's; otherwise throws std::invalid_argument on every rank, each naming `fn` and what differs.
void check_offers_agree(const ProcessGroup& group, const char* fn, const Offer& mine);

// The offer of one tensor: refused when undefined, not contiguous, or (floating_only) neither float32 nor float64.
Offer offer_of(const Tensor& t, bool floating_only);

// The offer of a list of tensors, undefined ones allowed (they must be undefined in the same places on every rank):
// a problem names the tensor as "<what> <index>", and the list is described as "4 <what>s, 52 elements".
Offer offer_of_list(const char* what, const std::vector<Tensor>& tensors, bool floating_only);

}  // namespace cppgrad::distributed
