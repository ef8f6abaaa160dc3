#pragma once
// Counting the matrix products a scope runs: while a CountProducts guard is alive on a thread, every batched_gemm
// (core/kernels/gemm.h) that thread starts adds one product and its multiply-adds (batch x M x N x K). Tests use it
// to prove a product is skipped, e.g. no weight-gradient product for a frozen weight (nn/lora.h), as the packed
// weights' tests prove their path is taken by counting packings.
//
// Thread-local and scoped, like ReusePackedWeights (core/kernels/packed_weights.h), for the same reason: the products
// are reached through ops and modules that know nothing of counting. A product split over the pool's threads is
// counted once, by the thread that asked for it; only the innermost guard counts.
#include <cstdint>

namespace cppgrad::kernels {

struct ProductCount {
  std::int64_t products = 0;
  std::int64_t multiply_adds = 0;
};

class CountProducts {
 public:
  CountProducts();
  ~CountProducts();
  CountProducts(const CountProducts&) = delete;
  CountProducts& operator=(const CountProducts&) = delete;
  const ProductCount& count() const { return count_; }

 private:
  ProductCount count_;
  ProductCount* previous_;
};

// Adds one product of `multiply_adds` to this thread's innermost CountProducts guard, if any (batched_gemm calls it).
void count_product(std::int64_t multiply_adds);

}  // namespace cppgrad::kernels
