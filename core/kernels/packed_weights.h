#pragma once
// Weights packed once for several products: while a ReusePackedWeights guard is alive on a thread, the tiled float
// GEMM (core/kernels/gemm_tiled.h) and the bfloat16 one (gemm_bf16_tiled.h) keep the panels it packs a linear layer's weight into, and a later product with
// the same weight on that thread reads them instead of packing again. A data-parallel step (train/data_parallel.h)
// runs several shards on one thread, each shard's layers multiplying by the same weights: with the guard around them,
// each weight is packed once a step instead of once a shard. The panels hold the weight's values, so every product is
// the same bits with or without the guard (tests/core/test_kernels_match_definitions.cpp holds them equal).
//
// Why a thread-local pointer, like the no-grad switch (core/autograd.h): the GEMM is reached from a module's forward
// and its backward rule, through ops that know nothing of steps; handing a cache down through every module and op
// would put a kernel's detail into every signature. So the guard installs its store for its lifetime and puts back
// the one before it; the store and every panel in it go with the guard, nothing outlives it, and a thread without a
// guard packs as it always did. Unlike the no-grad switch it is not part of the execution context the thread pool
// carries into its workers (core/execution_context.h): a store is one thread's, searched and appended without a
// lock, so each thread that wants one opens its own.
//
// A kept packing is found by the weight's first element's address, its strides and sizes and the panel width, and it
// holds the weight's storage (so that address cannot come back holding other values) and the storage's version when
// packed (core/storage.h): a weight changed since is packed again. Every write moves the version on, whether through
// Tensor's in-place methods (fill_, copy_, add_, set) or through the raw pointer mutable_data<T>() gives (an
// optimizer's update): data<T>() gives a const pointer, for reading, which does not, so the products of a step's
// forward and backward, which only read the weights, find their packings kept.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/storage.h"

namespace cppgrad::kernels {

// How a B is packed: the float GEMM's panels (gemm_tiled.h), or the bfloat16 GEMM's rounded pairs of k
// (gemm_bf16_tiled.h), whose buffer holds 32-bit values of either kind.
enum class PackedLayout { Float32, Bfloat16Pairs };

// Which packing of which B: its first element, strides and sizes (K rows, N columns), the panel width and the layout.
struct PackedKey {
  const float* data = nullptr;
  std::int64_t row_stride = 0, col_stride = 0, K = 0, N = 0, panel_width = 0;
  PackedLayout layout = PackedLayout::Float32;
  bool operator==(const PackedKey&) const = default;
};

// One thread's kept packings, owned by its ReusePackedWeights guard.
class PackedWeights {
 public:
  PackedWeights() = default;
  ~PackedWeights();
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  // The buffer of `floats` elements that holds key's packing, and whether it already does (packed by an earlier
  // product since the storage's last in-place change). When it does not, the caller packs every block into it
  // before the next call (the entry counts as packed from now on).
  struct Panels {
    float* data;
    bool packed;
  };
  Panels panels(const PackedKey& key, const std::shared_ptr<Storage>& storage, std::size_t floats);

  // Products that found their packing kept, and packings made (for the tests).
  std::int64_t reused() const { return reused_; }
  std::int64_t packed() const { return packed_; }

 private:
  struct Entry {
    PackedKey key;
    std::shared_ptr<const Storage> storage;  // keeps key.data's memory from being reused while the entry lives
    std::uint64_t version = 0;               // the storage's version when packed
    float* data = nullptr;                   // from allocate_storage: the block cache serves the next step's guard
    std::size_t bytes = 0;
  };
  std::vector<Entry> entries_;  // a step's distinct weights: a few dozen, searched in order
  std::int64_t reused_ = 0, packed_ = 0;
};

// The store of this thread's innermost ReusePackedWeights guard, or null (products pack as always).
PackedWeights* packed_weights_in_scope();

// Keeps the packed weights of this thread's products for its lifetime (see the top of this file).
class ReusePackedWeights {
 public:
  ReusePackedWeights();
  ~ReusePackedWeights();
  ReusePackedWeights(const ReusePackedWeights&) = delete;
  ReusePackedWeights& operator=(const ReusePackedWeights&) = delete;
  const PackedWeights& store() const { return store_; }

 private:
  PackedWeights store_;
  PackedWeights* previous_;
};

}  // namespace cppgrad::kernels
