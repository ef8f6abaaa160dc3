#include "core/execution_context.h"

#include <cstdlib>
#include <cstring>

namespace cppgrad {

namespace {
bool reference_from_environment() {
  const char* v = std::getenv("CPPGRAD_REFERENCE");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

// The one thread-local the switches live in; each thread starts from initial().
thread_local ExecutionContext t_context = ExecutionContext::initial();
}  // namespace

ExecutionContext ExecutionContext::initial() {
  return {.grad_enabled = true,
          .detect_anomaly = false,
          .reference_mode = reference_from_environment(),
          .linear_precision = LinearPrecision::Float32};
}

ExecutionContext ExecutionContext::current() { return t_context; }

ExecutionContext& detail::this_thread_context() { return t_context; }

ExecutionContextGuard::ExecutionContextGuard(const ExecutionContext& context) : previous_(t_context) {
  t_context = context;
}
ExecutionContextGuard::~ExecutionContextGuard() { t_context = previous_; }

LinearPrecision linear_precision() { return t_context.linear_precision; }

const char* linear_precision_name(LinearPrecision precision) {
  return precision == LinearPrecision::BFloat16 ? "bfloat16" : "float32";
}

LinearPrecisionGuard::LinearPrecisionGuard(LinearPrecision precision) : previous_(t_context.linear_precision) {
  t_context.linear_precision = precision;
}
LinearPrecisionGuard::~LinearPrecisionGuard() { t_context.linear_precision = previous_; }

}  // namespace cppgrad
