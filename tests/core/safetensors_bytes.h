#pragma once
// A safetensors file's bytes, for the reader's tests: [8-byte little-endian header length][header][data].
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cppgrad::test {

inline std::vector<std::byte> safetensors_bytes(const std::string& header, const std::vector<std::uint8_t>& data) {
  std::vector<std::byte> out(8 + header.size() + data.size());
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  if (!data.empty()) std::memcpy(out.data() + 8 + header.size(), data.data(), data.size());
  return out;
}

// The same with `data_bytes` zero bytes of data.
inline std::vector<std::byte> safetensors_bytes(const std::string& header, std::size_t data_bytes = 0) {
  return safetensors_bytes(header, std::vector<std::uint8_t>(data_bytes, 0));
}

}  // namespace cppgrad::test
