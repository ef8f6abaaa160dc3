#include "core/kernels/product_count.h"

namespace cppgrad::kernels {

namespace {
thread_local ProductCount* g_count = nullptr;  // set and put back only by CountProducts
}  // namespace

CountProducts::CountProducts() : previous_(g_count) { g_count = &count_; }
CountProducts::~CountProducts() { g_count = previous_; }

void count_product(std::int64_t multiply_adds) {
  if (!g_count) return;
  ++g_count->products;
  g_count->multiply_adds += multiply_adds;
}

}  // namespace cppgrad::kernels
