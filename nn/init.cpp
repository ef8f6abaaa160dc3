#include "nn/init.h"

#include "core/ops/elementwise.h"

namespace cppgrad::nn::init {

namespace {
thread_local bool g_skipped = false;  // this thread's innermost SkipInit, or false
}  // namespace

bool init_skipped() { return g_skipped; }

SkipInit::SkipInit(bool skip) : previous_(g_skipped) { g_skipped = skip; }
SkipInit::~SkipInit() { g_skipped = previous_; }

void normal_(const Tensor& p, double std, Generator& gen) {
  if (init_skipped()) return gen.skip_normals(static_cast<std::uint64_t>(p.numel()));
  p.copy_(mul(Tensor::randn(p.shape(), gen, p.dtype()), std));
}

}  // namespace cppgrad::nn::init
