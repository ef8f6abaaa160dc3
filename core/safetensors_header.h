#pragma once
// The safetensors header reader behind core/safetensors.h (internal: include safetensors.h, not this). It streams the
// header's JSON through one SAX pass straight into SafetensorsHeader's entries, never building a JSON tree, so its
// memory is the entries and strings it keeps (bounded: kMaxSafetensorsEntries, 16 MiB a string) plus the string being
// lexed, however large the header.
#include <cstdint>
#include <functional>
#include <string>

#include "core/safetensors.h"

namespace cppgrad::safetensors_detail {

// Reads exactly n bytes at `offset` of the file into out (or throws).
using ReadBytes = std::function<void(std::uint64_t offset, void* out, std::uint64_t n)>;

// The header of a file of `size` bytes: its length (read first, and bounded before anything is allocated), its
// entries, each checked against the data section, and its metadata.
SafetensorsHeader read_header(const std::string& path, std::uint64_t size, const ReadBytes& read);

// What both halves of the reader say in their messages.
[[noreturn]] void fail(const std::string& path, const std::string& what);
std::string quoted(const std::string& s);            // 'name', cut short past 80 bytes
std::string tensor_label(const std::string& name);   // tensor 'name'

}  // namespace cppgrad::safetensors_detail
