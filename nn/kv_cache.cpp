#include "nn/kv_cache.h"

#include <fmt/format.h>

#include <stdexcept>

namespace cppgrad::nn {

KVCache::KVCache(std::int64_t n_layer, std::int64_t batch, std::int64_t n_head, std::int64_t block_size,
                 std::int64_t head_dim, DType dtype) {
  if (n_layer <= 0 || batch <= 0 || n_head <= 0 || block_size <= 0 || head_dim <= 0)
    throw std::invalid_argument(fmt::format(
        "KVCache: every size must be positive, got n_layer {}, batch {}, n_head {}, block_size {}, head_dim {}",
        n_layer, batch, n_head, block_size, head_dim));
  // [B, block_size, nh, hd] storage viewed as [B, nh, block_size, hd]; zeroed once (nothing reads past `length`,
  // but a position skipped by a bug then reads zeros, not whatever the memory held)
  auto position_major = [&] {
    return Tensor::zeros({batch, block_size, n_head, head_dim}, dtype).transpose(1, 2);
  };
  layers.reserve(static_cast<std::size_t>(n_layer));
  for (std::int64_t i = 0; i < n_layer; ++i) layers.push_back({position_major(), position_major()});
}

}  // namespace cppgrad::nn
