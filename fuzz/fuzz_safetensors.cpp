// libFuzzer harness: any bytes, parsed as a safetensors file. A refusal (std::runtime_error naming the file) is
// the expected answer to a bad file; anything else (a crash, a sanitizer report, another exception, a hang, a
// huge allocation) is a bug. Two promises beyond not crashing:
//   - read_safetensors (the same bytes in a file, read piece by piece) agrees with parse_safetensors (bytes in
//     memory): both refuse with the same message after "safetensors: <name>: ", or both read the same tensors;
//   - whatever the reader accepts, write_safetensors writes and the reader reads back unchanged.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "fuzz_util.h"

using cppgrad::fuzz::bug;

namespace {

// The refusal without its "safetensors: <name>: " prefix.
std::string reason(const std::runtime_error& e, const std::string& name) {
  const std::string prefix = "safetensors: " + name + ": ", what = e.what();
  if (what.rfind(prefix, 0) != 0) bug("a refusal without the prefix '" + prefix + "': " + what);
  return what.substr(prefix.size());
}

void expect_same(const cppgrad::SafetensorsFile& a, const cppgrad::SafetensorsFile& b, const std::string& what) {
  if (a.metadata != b.metadata) bug(what + ": the metadata differs");
  if (!cppgrad::fuzz::same_bits(a.tensors, b.tensors)) bug(what + ": the tensors differ");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string file = "/tmp/cppgrad_fuzz_safetensors_" + std::to_string(::getpid()) + ".safetensors";
  static const std::string copy = "/tmp/cppgrad_fuzz_safetensors_" + std::to_string(::getpid()) + ".copy.safetensors";
  const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);

  cppgrad::SafetensorsFile from_memory, from_file;
  std::string memory_refusal, file_refusal;
  try {
    from_memory = cppgrad::parse_safetensors(bytes, "fuzz");
    for (const auto& [name, t] : from_memory.tensors) (void)t.to_double_vector();  // every value must be readable
  } catch (const std::runtime_error& e) {
    memory_refusal = reason(e, "fuzz");
  }

  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) bug("cannot create the scratch file " + file);
  const bool written = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !written) bug("cannot write the scratch file " + file);
  try {
    from_file = cppgrad::read_safetensors(file);
  } catch (const std::runtime_error& e) {
    file_refusal = reason(e, file);
  }

  if (memory_refusal != file_refusal)
    bug("parse_safetensors and read_safetensors disagree: '" + memory_refusal + "' vs '" + file_refusal + "'");
  if (!memory_refusal.empty()) return 0;  // refused, the same way twice
  expect_same(from_memory, from_file, "parse_safetensors vs read_safetensors");
  cppgrad::write_safetensors(copy, from_memory.tensors, from_memory.metadata);  // what it reads, it can write
  expect_same(from_memory, cppgrad::read_safetensors(copy), "written and read back");
  return 0;
}
