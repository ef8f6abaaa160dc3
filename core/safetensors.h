#pragma once
// safetensors: the tensor file format of Hugging Face / PyTorch, used for the golden test cases and checkpoints.
//
//   [8 bytes: header length N, little-endian u64][N bytes: JSON header][data section: raw little-endian bytes]
//
// The header maps each tensor name to {"dtype": "F32"|"F64"|"I64"|"BOOL", "shape": [..],
// "data_offsets": [begin, end]} (byte offsets into the data section), plus an optional "__metadata__" object of
// string -> string. The reader treats the file as hostile: every length, offset and size is checked (with
// overflow-safe arithmetic) before a byte is copied, and each refusal throws std::runtime_error
// "safetensors: <path>: <what is wrong>".
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace cppgrad {

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;         // fresh contiguous tensors, not attached to any graph
  std::map<std::string, std::string> metadata;   // the "__metadata__" object (all values strings)
};

// Reads and validates a whole file. Throws std::runtime_error "safetensors: <path>: ..." on any problem.
SafetensorsFile read_safetensors(const std::string& path);

// The same checks on bytes already in memory; name_for_errors stands in for the path in messages.
SafetensorsFile parse_safetensors(const std::vector<std::byte>& bytes, const std::string& name_for_errors);

// Writes the tensors (any layout and dtype; values only, no autograd state) in name order, atomically
// (core/atomic_file.h: a crash leaves either the old file or the complete new one, and only a regular file is
// ever replaced). Throws std::runtime_error naming the path and the failing step.
void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace cppgrad
