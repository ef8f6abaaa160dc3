#include "core/parallel.h"

#include <optional>

#include "core/autograd.h"
#include "core/dispatch.h"

namespace cppgrad {

void run_in_parallel(int n, const std::function<void(int)>& work) {
  const bool grad_on = grad_enabled(), anomaly_on = anomaly_detection_enabled(), reference_on = reference_mode();
  parallel_pieces(n, [&](int i) {
    std::optional<NoGradGuard> no_grad;
    std::optional<DetectAnomalyGuard> anomaly;
    if (!grad_on) no_grad.emplace();
    if (anomaly_on) anomaly.emplace();
    ReferenceModeGuard reference(reference_on);
    work(i);
  });
}

}  // namespace cppgrad
