#include "core/kernels/packed_weights.h"

#include "core/allocator.h"

namespace cppgrad::kernels {

namespace {
// The scoped store: set and put back only by ReusePackedWeights, as the no-grad switch is by its guard.
thread_local PackedWeights* g_packed_weights = nullptr;
}  // namespace

PackedWeights::~PackedWeights() {
  for (const Entry& e : entries_) free_storage(e.data, e.bytes);
}

PackedWeights::Panels PackedWeights::panels(const PackedKey& key, const std::shared_ptr<Storage>& storage,
                                            std::size_t floats) {
  for (Entry& e : entries_) {
    if (!(e.key == key) || e.storage != storage) continue;
    if (e.version == storage->version()) {
      ++reused_;
      return {e.data, true};
    }
    e.version = storage->version();  // changed in place since it was packed: pack again, into the same buffer
    ++packed_;
    return {e.data, false};
  }
  entries_.reserve(entries_.size() + 1);  // so that the push below cannot throw with the buffer unowned
  const std::size_t bytes = floats * sizeof(float);
  entries_.push_back({key, storage, storage->version(), static_cast<float*>(allocate_storage(bytes)), bytes});
  ++packed_;
  return {entries_.back().data, false};
}

PackedWeights* packed_weights_in_scope() { return g_packed_weights; }

ReusePackedWeights::ReusePackedWeights() : previous_(g_packed_weights) { g_packed_weights = &store_; }
ReusePackedWeights::~ReusePackedWeights() { g_packed_weights = previous_; }

}  // namespace cppgrad::kernels
