#include "core/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/half.h"
#include "core/safetensors_header.h"

namespace cppgrad {

// The file stores little-endian bytes and we memcpy them straight into tensors (and back out).
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace {

using json = nlohmann::json;
using safetensors_detail::fail;
using safetensors_detail::tensor_label;

// For system-call failures: appends strerror(errno). Reads errno first, before anything can clobber it.
[[noreturn]] void fail_errno(const std::string& path, const std::string& what) {
  const int err = errno;
  fail(path, what + ": " + std::strerror(err));
}

// --- dtype codes: the file's names for its element types ---------------------------------------------------
struct DTypeCode {
  StoredDType stored;
  const char* code;
  const char* name;  // cppgrad's name: dtype_name of the dtype it reads as, or the half type's own
  std::size_t size;
  DType dtype;       // what it is read as
};
constexpr DTypeCode kDTypeCodes[] = {
    {StoredDType::F32, "F32", "float32", 4, DType::Float32},    {StoredDType::F64, "F64", "float64", 8, DType::Float64},
    {StoredDType::I64, "I64", "int64", 8, DType::Int64},        {StoredDType::BOOL, "BOOL", "bool", 1, DType::Bool},
    {StoredDType::F16, "F16", "float16", 2, DType::Float32},    {StoredDType::BF16, "BF16", "bfloat16", 2, DType::Float32}};

const DTypeCode& code_entry(StoredDType d) {
  for (const auto& c : kDTypeCodes)
    if (c.stored == d) return c;
  throw std::logic_error("safetensors: unknown StoredDType");
}

// The file code cppgrad writes for a dtype (one of the first four: each DType is stored as itself).
const char* code_of(DType dtype) {
  for (const auto& c : kDTypeCodes)
    if (dtype == c.dtype && c.size == dtype_size(dtype)) return c.code;
  throw std::logic_error("safetensors: no file code for dtype " + std::string(dtype_name(dtype)));
}

// A bool byte other than 0 or 1 is undefined behaviour once read as a C++ bool, so it never gets that far.
void check_bool_bytes(const std::string& path, const std::string& name, const std::byte* data, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i)
    if (data[i] != std::byte{0} && data[i] != std::byte{1})
      fail(path, tensor_label(name) + ": BOOL element " + std::to_string(i) + " has byte value " +
                     std::to_string(std::to_integer<int>(data[i])) + " (only 0 and 1 are valid)");
}

// Opens path for reading and returns its size; refuses anything but a regular file.
std::uint64_t open_regular_file(const std::string& path, int& fd) {
  // O_NONBLOCK: opening a FIFO would otherwise wait forever for a writer; fstat below refuses it instead.
  // (On regular files the flag changes nothing.)
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail_errno(path, "cannot open for reading");
  struct stat info {};
  if (::fstat(fd, &info) != 0) fail_errno(path, "cannot stat");
  if (S_ISDIR(info.st_mode)) fail(path, "is a directory, not a regular file");
  if (!S_ISREG(info.st_mode)) fail(path, "not a regular file");
  return static_cast<std::uint64_t>(info.st_size);
}

// Exactly n bytes from `offset` into `out`.
void read_exactly(const std::string& path, int fd, std::uint64_t offset, void* out, std::uint64_t n) {
  auto* p = static_cast<char*>(out);
  std::uint64_t done = 0;
  while (done < n) {
    // One read moves at most ~2 GB on Linux; ask for 1 GB at a time.
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n - done, 1u << 30));
    const ssize_t got = ::pread(fd, p + done, chunk, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "read failed");
    }
    if (got == 0) fail(path, "file shrank while being read (" + std::to_string(offset + done) + " bytes in)");
    done += static_cast<std::uint64_t>(got);
  }
}

}  // namespace

const char* stored_code(StoredDType dtype) { return code_entry(dtype).code; }
const char* stored_name(StoredDType dtype) { return code_entry(dtype).name; }
std::size_t stored_size(StoredDType dtype) { return code_entry(dtype).size; }
DType loaded_dtype(StoredDType dtype) { return code_entry(dtype).dtype; }
bool is_floating(StoredDType dtype) { return is_floating(loaded_dtype(dtype)); }

// The header first, then exactly the bytes each tensor needs when asked: a file is never read whole, so a huge or
// sparse file with a bad header costs one 8-byte read and a header's worth of reads.
SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path) {
  try {
    const std::uint64_t size = open_regular_file(path_, fd_);
    header_ = safetensors_detail::read_header(
        path_, size, [this](std::uint64_t offset, void* out, std::uint64_t n) { read_bytes(offset, out, n); });
  } catch (...) {
    if (fd_ >= 0) ::close(fd_);  // the destructor does not run for a constructor that throws
    throw;
  }
}

SafetensorsReader::SafetensorsReader(std::span<const std::byte> bytes, const std::string& name_for_errors)
    : path_(name_for_errors), bytes_(bytes) {
  header_ = safetensors_detail::read_header(
      path_, bytes_.size(), [this](std::uint64_t offset, void* out, std::uint64_t n) { read_bytes(offset, out, n); });
}

SafetensorsReader::~SafetensorsReader() {
  if (fd_ >= 0) ::close(fd_);
}

void SafetensorsReader::read_bytes(std::uint64_t offset, void* out, std::uint64_t n) const {
  if (fd_ >= 0) read_exactly(path_, fd_, offset, out, n);
  else std::memcpy(out, bytes_.data() + offset, n);  // the header's checks keep every range inside bytes_
}

const SafetensorsEntry* SafetensorsReader::find(const std::string& name) const {
  for (const SafetensorsEntry& e : header_.entries)
    if (e.name == name) return &e;
  return nullptr;
}

Tensor SafetensorsReader::read(const SafetensorsEntry& e) const {
  const std::uint64_t nbytes = e.end - e.begin;
  const std::uint64_t at = header_.data_start + e.begin;
  Tensor t = Tensor::empty(e.shape, loaded_dtype(e.dtype));  // fresh, contiguous, offset 0
  std::byte* data = t.impl().storage->mutable_data();
  if (e.dtype == StoredDType::F16 || e.dtype == StoredDType::BF16) {
    // Widened a chunk at a time, so the half-precision bytes never need a second tensor-sized buffer.
    const bool f16 = e.dtype == StoredDType::F16;
    constexpr std::uint64_t kChunk = 1 << 16;  // elements
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(std::min<std::uint64_t>(nbytes / 2, kChunk)));
    auto* out = reinterpret_cast<float*>(data);
    for (std::uint64_t done = 0; done < nbytes / 2;) {
      const std::uint64_t n = std::min<std::uint64_t>(nbytes / 2 - done, kChunk);
      read_bytes(at + 2 * done, bits.data(), 2 * n);
      for (std::uint64_t i = 0; i < n; ++i) out[done + i] = f16 ? float16_to_float(bits[i]) : bfloat16_to_float(bits[i]);
      done += n;
    }
    return t;
  }
  if (nbytes > 0) read_bytes(at, data, nbytes);
  if (e.dtype == StoredDType::BOOL) check_bool_bytes(path_, e.name, data, nbytes);
  return t;
}

SafetensorsFile SafetensorsReader::read_all() const& {
  SafetensorsFile file;
  file.metadata = header_.metadata;
  for (const SafetensorsEntry& e : header_.entries) file.tensors.emplace(e.name, read(e));
  return file;
}

SafetensorsFile SafetensorsReader::read_all() && {
  SafetensorsFile file;
  for (const SafetensorsEntry& e : header_.entries) file.tensors.emplace(e.name, read(e));
  file.metadata = std::move(header_.metadata);  // a metadata value can be megabytes: not copied
  return file;
}

SafetensorsFile parse_safetensors(const std::vector<std::byte>& bytes, const std::string& name_for_errors) {
  return SafetensorsReader(bytes, name_for_errors).read_all();
}

SafetensorsFile read_safetensors(const std::string& path) { return SafetensorsReader(path).read_all(); }

void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  // 1. The header, and the contiguous bytes of each tensor, in name order (std::map) with consecutive offsets.
  json header = json::object();
  std::vector<Tensor> blobs;
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == "__metadata__") fail(path, "'__metadata__' is reserved for the metadata and cannot name a tensor");
    if (!tensor.defined()) fail(path, tensor_label(name) + " is undefined (a default-constructed Tensor)");
    Tensor c = tensor.detach().contiguous();
    const std::uint64_t nbytes = static_cast<std::uint64_t>(c.numel()) * dtype_size(c.dtype());
    header[name] = {{"dtype", code_of(c.dtype())}, {"shape", c.shape()}, {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    blobs.push_back(std::move(c));
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;

  std::string text;
  try {
    text = header.dump();
  } catch (const json::type_error& e) {  // JSON strings must be UTF-8
    fail(path, std::string("a tensor name or metadata string is not valid UTF-8 (") + e.what() + ")");
  }
  // Pad with spaces so the data section starts 8-byte aligned, as the reference implementation does.
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::uint64_t header_size = text.size();

  // 2. The bytes, written atomically (core/atomic_file.h): readers see the old file or the whole new one.
  try {
    write_file_atomically(path, [&](const ByteSink& sink) {
      sink(&header_size, 8);  // little-endian host
      sink(text.data(), text.size());
      for (const Tensor& c : blobs)
        if (c.numel() > 0)
          sink(c.impl().storage->data() + c.offset() * static_cast<std::int64_t>(dtype_size(c.dtype())),
               static_cast<std::size_t>(c.numel()) * dtype_size(c.dtype()));
    });
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("safetensors: ") + e.what());  // "<path>: <what failed>" from the writer
  }
}

}  // namespace cppgrad
