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
#include <optional>
#include <set>
#include <stdexcept>

namespace cppgrad {

// The file stores little-endian bytes and we memcpy them straight into tensors (and back out).
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace {

using json = nlohmann::json;

// The same limit as the reference (Rust) implementation: a real header is a few KB, so anything larger is
// corruption or an attempt to make us allocate.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
// A valid header nests three deep (header object -> entry object -> shape list); deeper JSON is hostile.
constexpr int kMaxJsonDepth = 8;
// No real tensor has more dims; the cap stops a header from declaring a million-dim zero-sized tensor.
constexpr std::size_t kMaxRank = 64;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("safetensors: " + path + ": " + what);
}

// For system-call failures: appends strerror(errno). Reads errno first, before anything can clobber it.
[[noreturn]] void fail_errno(const std::string& path, const std::string& what) {
  const int err = errno;
  fail(path, what + ": " + std::strerror(err));
}

// A name or string from the file as it appears in a message: quoted, and cut short so that a hostile
// 100 MB name cannot flood a log.
std::string quoted(const std::string& s) {
  constexpr std::size_t kMaxShown = 80;
  if (s.size() <= kMaxShown) return "'" + s + "'";
  return "'" + s.substr(0, kMaxShown) + "...' (" + std::to_string(s.size()) + " bytes)";
}

std::string tensor_label(const std::string& name) { return "tensor " + quoted(name); }

// --- dtype codes: the file's names for our dtypes ---------------------------------------------------------
struct DTypeCode {
  const char* code;
  DType dtype;
};
constexpr DTypeCode kDTypeCodes[] = {
    {"F32", DType::Float32}, {"F64", DType::Float64}, {"I64", DType::Int64}, {"BOOL", DType::Bool}};

std::optional<DType> dtype_from_code(const std::string& code) {
  for (const auto& c : kDTypeCodes)
    if (code == c.code) return c.dtype;
  return std::nullopt;
}

const char* code_of(DType dtype) {
  for (const auto& c : kDTypeCodes)
    if (dtype == c.dtype) return c.code;
  throw std::logic_error("safetensors: no file code for dtype " + std::string(dtype_name(dtype)));
}

// --- file descriptors ---------------------------------------------------------------------------------------
// Owns a POSIX file descriptor, so every early return or throw closes it.
struct FileDescriptor {
  int fd = -1;
  explicit FileDescriptor(int fd_) : fd(fd_) {}
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  // Closes now and reports the result: for a written file, close() can be where a deferred write error shows up.
  int close() {
    const int result = ::close(fd);
    fd = -1;
    return result;
  }
};

// Removes the temporary file on every path out of the writer except success (after the rename, there is
// nothing left to remove).
struct TempFileGuard {
  std::string path;
  bool keep = false;
  ~TempFileGuard() {
    if (!keep) ::unlink(path.c_str());
  }
};

// ---------------------------------------------------------------------------------------------- reading
// Parses the header JSON, refusing duplicate keys (which entry would win is up to the parser: an ambiguous
// file) and absurd nesting (a header of 100 MB of '[' would otherwise build a 100-million-deep tree).
json parse_header_json(const std::string& path, const char* begin, const char* end) {
  std::vector<std::set<std::string>> keys_seen;  // one set per object currently open
  auto check = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth)
          fail(path, "header JSON nests more than " + std::to_string(kMaxJsonDepth) +
                         " levels deep; a safetensors header needs 3");
        if (event == json::parse_event_t::object_start) keys_seen.emplace_back();
        break;
      case json::parse_event_t::object_end:
        keys_seen.pop_back();
        break;
      case json::parse_event_t::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        if (!keys_seen.back().insert(key).second) fail(path, "duplicate key " + quoted(key) + " in the header JSON");
        break;
      }
      default:
        break;
    }
    return true;  // keep every value
  };
  try {
    return json::parse(begin, end, check);
  } catch (const json::parse_error& e) {
    fail(path, std::string("header is not valid JSON (") + e.what() + ")");
  }
}

// A JSON integer in [0, 2^64). Floats (even 2.0), strings and negatives are not offsets.
std::optional<std::uint64_t> as_offset(const json& j) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  return std::nullopt;  // nlohmann stores every non-negative integer literal as unsigned
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  std::uint64_t begin, end;  // byte range in the data section
};

Shape parse_shape(const std::string& path, const std::string& name, const json& j) {
  const std::string who = tensor_label(name);
  if (!j.is_array()) fail(path, who + ": \"shape\" must be a list of integers, got " + j.type_name());
  if (j.size() > kMaxRank)
    fail(path, who + ": shape has " + std::to_string(j.size()) + " dims, more than the " + std::to_string(kMaxRank) +
                   " cppgrad supports");
  Shape shape;
  for (const json& d : j) {
    if (!d.is_number_integer())
      fail(path, who + ": \"shape\" must be a list of integers, found " +
                     (d.is_number() ? std::string("a non-integer number") : "a " + std::string(d.type_name())));
    if (!d.is_number_unsigned())
      fail(path, who + ": negative size " + std::to_string(d.get<std::int64_t>()) + " in shape");
    const std::uint64_t size = d.get<std::uint64_t>();
    if (size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(path, who + ": size " + std::to_string(size) + " in shape does not fit in int64");
    shape.push_back(static_cast<std::int64_t>(size));
  }
  return shape;
}

// How many bytes a tensor of this shape and dtype holds. The product of the non-zero sizes must fit in int64
// even when some size is 0: Tensor computes strides (suffix products) in int64 regardless.
std::uint64_t byte_size(const std::string& path, const std::string& name, const Shape& shape, DType dtype) {
  std::int64_t product = 1;
  bool has_zero = false;
  for (const std::int64_t d : shape) {
    if (d == 0) {
      has_zero = true;
    } else if (__builtin_mul_overflow(product, d, &product)) {
      fail(path, tensor_label(name) + ": shape " + shape_str(shape) + " has more elements than int64 can count");
    }
  }
  if (has_zero) return 0;
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(product), dtype_size(dtype), &bytes))
    fail(path, tensor_label(name) + ": shape " + shape_str(shape) + " has too many bytes to count");
  return bytes;
}

Entry parse_entry(const std::string& path, const std::string& name, const json& j, std::uint64_t data_size) {
  const std::string who = tensor_label(name);
  if (!j.is_object())
    fail(path, who + ": entry must be an object {\"dtype\", \"shape\", \"data_offsets\"}, got " + j.type_name());
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!j.contains(field)) fail(path, who + ": entry has no \"" + field + "\"");

  const json& jdtype = j.at("dtype");
  if (!jdtype.is_string()) fail(path, who + ": \"dtype\" must be a string, got " + jdtype.type_name());
  const auto& code = jdtype.get_ref<const std::string&>();
  const std::optional<DType> dtype = dtype_from_code(code);
  if (!dtype) fail(path, "unknown dtype " + quoted(code) + " for " + who + " (cppgrad reads F32, F64, I64, BOOL)");

  Shape shape = parse_shape(path, name, j.at("shape"));
  const std::uint64_t nbytes = byte_size(path, name, shape, *dtype);

  const json& joff = j.at("data_offsets");
  if (!joff.is_array() || joff.size() != 2)
    fail(path, who + ": \"data_offsets\" must be a list [begin, end] of two non-negative integers");
  const auto begin = as_offset(joff[0]), end = as_offset(joff[1]);
  if (!begin || !end) fail(path, who + ": \"data_offsets\" must be two non-negative integers [begin, end]");
  const std::string range = "[" + std::to_string(*begin) + ", " + std::to_string(*end) + "]";
  if (*begin > *end) fail(path, who + ": data_offsets " + range + " have begin > end");
  if (*end > data_size)
    fail(path, who + ": data_offsets " + range + " run past the end of the data section (" +
                   std::to_string(data_size) + " bytes); is the file truncated?");
  if (*end - *begin != nbytes)
    fail(path, who + ": " + code + " " + shape_str(shape) + " needs " + std::to_string(nbytes) +
                   " bytes but data_offsets " + range + " hold " + std::to_string(*end - *begin));
  return Entry{name, *dtype, std::move(shape), *begin, *end};
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const json& j) {
  if (!j.is_object()) fail(path, "\"__metadata__\" must be an object of strings, got " + std::string(j.type_name()));
  std::map<std::string, std::string> metadata;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_string())
      fail(path, "\"__metadata__\" value for key " + quoted(it.key()) + " must be a string, got " +
                     it.value().type_name());
    metadata.emplace(it.key(), it.value().get<std::string>());
  }
  return metadata;
}

// Two tensors sharing bytes would alias after loading in PyTorch but not here; the reference implementation
// refuses such files, and so do we. Empty ranges hold no bytes and cannot overlap anything.
void check_no_overlap(const std::string& path, std::vector<const Entry*> entries) {
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  const Entry* previous = nullptr;
  for (const Entry* e : entries) {
    if (e->begin == e->end) continue;
    if (previous && e->begin < previous->end)
      fail(path, "tensors " + quoted(previous->name) + " [" + std::to_string(previous->begin) + ", " +
                     std::to_string(previous->end) + "] and " + quoted(e->name) + " [" + std::to_string(e->begin) +
                     ", " + std::to_string(e->end) + "] overlap in the data section");
    previous = e;
  }
}

// A bool byte other than 0 or 1 is undefined behaviour once read as a C++ bool, so it never gets that far.
void check_bool_bytes(const std::string& path, const std::string& name, const std::byte* data, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i)
    if (data[i] != std::byte{0} && data[i] != std::byte{1})
      fail(path, tensor_label(name) + ": BOOL element " + std::to_string(i) + " has byte value " +
                     std::to_string(std::to_integer<int>(data[i])) + " (only 0 and 1 are valid)");
}

std::vector<std::byte> read_whole_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO would otherwise wait forever for a writer; fstat below refuses it instead.
  // (On regular files the flag changes nothing.)
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (file.fd < 0) fail_errno(path, "cannot open for reading");
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) fail_errno(path, "cannot stat");
  if (!S_ISREG(info.st_mode)) fail(path, "not a regular file");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  // Cheap checks before allocating a buffer the size of the file.
  if (size < 8)
    fail(path, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length (truncated?)");

  std::vector<std::byte> bytes(size);
  std::uint64_t done = 0;
  while (done < size) {
    // One read() moves at most ~2 GB on Linux; ask for 1 GB at a time.
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(size - done, 1u << 30));
    const ssize_t got = ::read(file.fd, bytes.data() + done, chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "read failed");
    }
    if (got == 0) fail(path, "file shrank while being read (" + std::to_string(done) + " of " +
                                 std::to_string(size) + " bytes)");
    done += static_cast<std::uint64_t>(got);
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------- writing
void write_all(const std::string& path, int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t wrote = ::write(fd, p, std::min<std::size_t>(n, 1u << 30));
    if (wrote < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "write failed");
    }
    p += wrote;
    n -= static_cast<std::size_t>(wrote);
  }
}

// After a rename, the new directory entry is durable only once the directory itself is synced.
void fsync_directory(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  FileDescriptor d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.fd < 0) fail_errno(path, "cannot open directory " + dir + " to sync it");
  // Some file systems cannot sync a directory (EINVAL); the rename has happened, which is the best they offer.
  if (::fsync(d.fd) != 0 && errno != EINVAL) fail_errno(path, "fsync of directory " + dir + " failed");
}

}  // namespace

SafetensorsFile parse_safetensors(const std::vector<std::byte>& bytes, const std::string& name_for_errors) {
  const std::string& path = name_for_errors;
  const std::uint64_t size = bytes.size();
  if (size < 8)
    fail(path, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length (truncated?)");

  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);  // little-endian on disk and (static_assert) in memory
  if (header_size > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(header_size) + " is over the 100 MB limit (corrupt file?)");
  if (header_size > size - 8)
    fail(path, "header length " + std::to_string(header_size) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes); is the file truncated?");

  const char* header_text = reinterpret_cast<const char*>(bytes.data()) + 8;
  const json header = parse_header_json(path, header_text, header_text + header_size);
  if (!header.is_object()) fail(path, "header must be a JSON object, got " + std::string(header.type_name()));

  const std::byte* data = bytes.data() + 8 + header_size;
  const std::uint64_t data_size = size - 8 - header_size;

  // Validate every entry before allocating anything.
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__")
      file.metadata = parse_metadata(path, it.value());
    else
      entries.push_back(parse_entry(path, it.key(), it.value(), data_size));
  }
  std::vector<const Entry*> pointers;
  for (const Entry& e : entries) pointers.push_back(&e);
  check_no_overlap(path, std::move(pointers));

  for (const Entry& e : entries) {
    const std::uint64_t nbytes = e.end - e.begin;
    if (e.dtype == DType::Bool) check_bool_bytes(path, e.name, data + e.begin, nbytes);
    Tensor t = Tensor::empty(e.shape, e.dtype);  // fresh, contiguous, offset 0
    if (nbytes > 0) std::memcpy(t.impl().storage->data(), data + e.begin, nbytes);
    file.tensors.emplace(e.name, std::move(t));
  }
  return file;
}

SafetensorsFile read_safetensors(const std::string& path) { return parse_safetensors(read_whole_file(path), path); }

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

  // 2. Write a temporary file and make it durable, then 3. rename it over the target: readers see the old file
  // or the new one, never half of one.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  TempFileGuard guard{tmp};
  FileDescriptor file(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (file.fd < 0) fail_errno(path, "cannot create temporary file " + tmp);
  write_all(path, file.fd, &header_size, 8);  // little-endian host
  write_all(path, file.fd, text.data(), text.size());
  for (const Tensor& c : blobs)
    if (c.numel() > 0)
      write_all(path, file.fd, c.impl().storage->data() + c.offset() * static_cast<std::int64_t>(dtype_size(c.dtype())),
                static_cast<std::size_t>(c.numel()) * dtype_size(c.dtype()));
  // Unbuffered write() calls leave nothing in user space to flush; fsync pushes the kernel's copy to disk.
  if (::fsync(file.fd) != 0) fail_errno(path, "fsync of " + tmp + " failed");
  if (file.close() != 0) fail_errno(path, "close of " + tmp + " failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail_errno(path, "cannot rename " + tmp + " over it");
  guard.keep = true;  // the temporary name no longer exists
  fsync_directory(path);
}

}  // namespace cppgrad
