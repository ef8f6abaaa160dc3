#include "core/dispatch.h"

#include <cstdlib>
#include <cstring>

namespace cppgrad {

namespace {
// Each thread starts from the environment: CPPGRAD_REFERENCE set to anything but "" or "0" turns the shortcuts off.
bool reference_from_environment() {
  const char* v = std::getenv("CPPGRAD_REFERENCE");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}
thread_local bool g_reference_mode = reference_from_environment();
}  // namespace

bool reference_mode() { return g_reference_mode; }
ReferenceModeGuard::ReferenceModeGuard(bool on) : previous_(g_reference_mode) { g_reference_mode = on; }
ReferenceModeGuard::~ReferenceModeGuard() { g_reference_mode = previous_; }

}  // namespace cppgrad
