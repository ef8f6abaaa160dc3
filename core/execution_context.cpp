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
  return {.grad_enabled = true, .detect_anomaly = false, .reference_mode = reference_from_environment()};
}

ExecutionContext ExecutionContext::current() { return t_context; }

ExecutionContext& detail::this_thread_context() { return t_context; }

ExecutionContextGuard::ExecutionContextGuard(const ExecutionContext& context) : previous_(t_context) {
  t_context = context;
}
ExecutionContextGuard::~ExecutionContextGuard() { t_context = previous_; }

}  // namespace cppgrad
