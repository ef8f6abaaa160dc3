// libFuzzer harness: any bytes, parsed as a safetensors file. A refusal (std::runtime_error naming the file) is
// the expected answer to a bad file; anything else (a crash, a sanitizer report, another exception, a hang, a
// huge allocation) is a bug.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  try {
    const cppgrad::SafetensorsFile f = cppgrad::parse_safetensors(bytes, "fuzz");
    for (const auto& [name, t] : f.tensors) (void)t.to_double_vector();  // every value must be readable
  } catch (const std::runtime_error&) {
  }
  return 0;
}
