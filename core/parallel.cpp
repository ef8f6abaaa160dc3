#include "core/parallel.h"

#include <omp.h>

#include <exception>
#include <optional>
#include <vector>

#include "core/autograd.h"
#include "core/dispatch.h"

namespace cppgrad {

int max_parallel_workers() { return omp_get_max_threads(); }

void run_in_parallel(int n, const std::function<void(int)>& work) {
  if (n <= 0) return;
  if (n == 1) return work(0);
  const bool grad_on = grad_enabled(), anomaly_on = anomaly_detection_enabled(), reference_on = reference_mode();
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
#pragma omp parallel for num_threads(n) schedule(static, 1)
  for (int i = 0; i < n; ++i) {
    try {
      std::optional<NoGradGuard> no_grad;
      std::optional<DetectAnomalyGuard> anomaly;
      if (!grad_on) no_grad.emplace();
      if (anomaly_on) anomaly.emplace();
      ReferenceModeGuard reference(reference_on);
      work(i);
    } catch (...) {
      errors[static_cast<std::size_t>(i)] = std::current_exception();  // an exception must not leave the region
    }
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace cppgrad
