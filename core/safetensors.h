#pragma once
// safetensors: the tensor file format of Hugging Face / PyTorch, used for the golden test cases and checkpoints.
//
//   [8 bytes: header length N, little-endian u64][N bytes: JSON header][data section: raw little-endian bytes]
//
// The header maps each tensor name to {"dtype": "F32"|"F64"|"I64"|"BOOL"|"F16"|"BF16", "shape": [..],
// "data_offsets": [begin, end]} (byte offsets into the data section), plus an optional "__metadata__" object of
// string -> string. F16 and BF16 tensors are read as float32 (exactly: core/half.h); the writer writes cppgrad's
// four dtypes. The reader treats the file as hostile: every length, offset and size is checked (with
// overflow-safe arithmetic) before a byte is copied, and each refusal throws std::runtime_error
// "safetensors: <path>: <what is wrong>".
//
// Two ways to read: read_safetensors (every tensor), or a SafetensorsReader, which reads and checks the header
// alone, so that a caller can judge the tensors' names, dtypes and shapes before any of their bytes is read
// (nn/gpt_hf.cpp: a file that is not GPT-2 is refused without reading its data).
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace cppgrad {

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;         // fresh contiguous tensors, not attached to any graph
  std::map<std::string, std::string> metadata;   // the "__metadata__" object (all values strings)
};

// The element types a file can hold: cppgrad's four, and the two half-precision types read as float32.
enum class StoredDType : std::uint8_t { F32, F64, I64, BOOL, F16, BF16 };
const char* stored_code(StoredDType dtype);   // the file's name: "F16"
const char* stored_name(StoredDType dtype);   // as cppgrad's messages say it: "float16" (F32: "float32", as DType)
std::size_t stored_size(StoredDType dtype);   // bytes per element in the file
DType loaded_dtype(StoredDType dtype);        // the tensor's dtype once read: F16 and BF16 become Float32
bool is_floating(StoredDType dtype);          // F32, F64, F16, BF16

// One tensor as the header describes it, already checked: a known dtype, a shape whose byte size fits, and
// offsets that lie in the data section (which the tensors cover exactly, one after another).
struct SafetensorsEntry {
  std::string name;
  StoredDType dtype = StoredDType::F32;
  Shape shape;
  std::uint64_t begin = 0, end = 0;  // byte range in the data section
};

// A header holds at most this many tensors (and at most this many metadata keys). GPT-2 XL has 580 tensors and a
// cppgrad checkpoint a few per parameter; the bound keeps the worst header's parse to ~20 MB (each entry costs ~100
// bytes in memory, ~50 in the file) where a 100 MB header of 1.5 million empty tensors would otherwise cost 300 MB.
inline constexpr std::size_t kMaxSafetensorsEntries = 100'000;

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;        // in the header's order
  std::map<std::string, std::string> metadata;  // the "__metadata__" object
  std::uint64_t data_start = 0;                 // 8 + the header's length: where the data section begins
};

// A file whose header has been read and checked, and nothing else: the tensors are read on request. Holds the file
// open (or, for bytes in memory, a view of them, which must outlive the reader). Throws std::runtime_error
// "safetensors: <path>: ..." on any problem, as read_safetensors does.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path);
  SafetensorsReader(std::span<const std::byte> bytes, const std::string& name_for_errors);
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader&) = delete;
  SafetensorsReader& operator=(const SafetensorsReader&) = delete;

  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  // The entry of that name, or nullptr.
  const SafetensorsEntry* find(const std::string& name) const;
  // The entry's tensor, fresh and contiguous (F16 and BF16 widened to float32); a BOOL byte other than 0 or 1 is
  // refused.
  Tensor read(const SafetensorsEntry& entry) const;
  // Every tensor and the metadata (moved out of a reader about to go: read_safetensors).
  SafetensorsFile read_all() const&;
  SafetensorsFile read_all() &&;

 private:
  void read_bytes(std::uint64_t offset, void* out, std::uint64_t n) const;

  std::string path_;
  int fd_ = -1;                       // the file, or -1 when reading bytes_
  std::span<const std::byte> bytes_;  // the bytes in memory
  SafetensorsHeader header_;
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
