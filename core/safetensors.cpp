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

#include "core/atomic_file.h"

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

// "[begin, end]", built by appending (GCC 12 misreads `"[" + std::to_string(...)` here as an overlapping copy).
std::string byte_range(std::uint64_t begin, std::uint64_t end) {
  std::string s = "[";
  s.append(std::to_string(begin)).append(", ").append(std::to_string(end)).append("]");
  return s;
}

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
};

// ---------------------------------------------------------------------------------------------- reading
// nlohmann's message without its "[json.exception.parse_error.101] " tag, which means nothing to a user.
std::string without_library_tag(const std::string& what) {
  const std::size_t close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos ? what.substr(close + 2) : what;
}

// One pass of nlohmann's SAX parser over the header that refuses what a header must never hold: a key repeated
// within one object (which entry would win is up to the parser: an ambiguous file), nesting deeper than
// kMaxJsonDepth (a header of 100 MB of '[' would otherwise build a 100-million-deep tree), and a list longer than
// kMaxListLength (100 MB of "0," would otherwise become a tree of 50 million values, 800 MB, before any shape is
// looked at). Linear in the header's size; nlohmann's parse-with-callback is not (it rescans the parent object at
// every object's end: 61 s for a header of 80,000 tensors).
class HeaderGuard final : public nlohmann::json_sax<json> {
 public:
  explicit HeaderGuard(const std::string& path) : path_(path) {}

  bool start_object(std::size_t) override { return open(/*list=*/false); }
  bool start_array(std::size_t) override { return open(/*list=*/true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    // (quoted) is ours: unparenthesised, argument-dependent lookup would also find std::quoted.
    if (!open_.back().keys.insert(k).second) fail(path_, "duplicate key " + (quoted)(k) + " in the header JSON");
    return true;
  }
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    fail(path_, "header is not valid JSON: " + without_library_tag(e.what()));  // also a number like 1e999
  }

 private:
  // No list in a valid header is longer than a shape (kMaxRank dims); this leaves room for any future field.
  static constexpr std::size_t kMaxListLength = 1024;

  struct Level {  // an object or list currently open
    bool list = false;
    std::size_t elements = 0;    // a list's values so far
    std::set<std::string> keys;  // an object's keys so far
  };

  // Every value (a list or object is one too) counts towards the list it stands in.
  bool value() {
    if (!open_.empty() && open_.back().list && ++open_.back().elements > kMaxListLength)
      fail(path_, "header JSON has a list of more than " + std::to_string(kMaxListLength) +
                      " values; the longest list in a safetensors header is a shape");
    return true;
  }
  bool open(bool list) {
    value();
    if (open_.size() >= static_cast<std::size_t>(kMaxJsonDepth))
      fail(path_, "header JSON nests more than " + std::to_string(kMaxJsonDepth) + " levels deep; a safetensors "
                  "header needs 3");
    open_.emplace_back().list = list;
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  const std::string& path_;
  std::vector<Level> open_;
};

// The header as a JSON value, after HeaderGuard's checks.
json parse_header_json(const std::string& path, const char* begin, const char* end) {
  // JSON text cannot hold a raw NUL byte (a string spells it \u0000), but nlohmann's lexer takes one for the end
  // of the input and ignores whatever follows it.
  if (const char* nul = std::find(begin, end, '\0'); nul != end)
    fail(path, "header is not valid JSON: a NUL byte at header offset " + std::to_string(nul - begin));
  HeaderGuard guard(path);
  json::sax_parse(begin, end, &guard);
  try {
    return json::parse(begin, end);
  } catch (const json::exception& e) {  // not expected after the guard's pass; never let one escape raw
    fail(path, "header is not valid JSON: " + without_library_tag(e.what()));
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
  const std::string range = byte_range(*begin, *end);
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

// The data section must be exactly the tensors' bytes, one after another: sorted by offset, the first starts at 0,
// each starts where the previous ended, and the last ends at the end of the file. That rules out overlapping
// tensors (which would alias in PyTorch but not here), gaps and trailing bytes, as the reference implementation
// does. An empty tensor holds no bytes but must still stand where the chain is, not inside another tensor.
void check_contiguous(const std::string& path, std::vector<const Entry*> entries, std::uint64_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : entries) {
    if (e->begin == e->end && e->begin == expected) continue;  // an empty tensor where the chain stands
    if (e->begin < expected)
      fail(path, "tensors " + quoted(previous->name) + " " + byte_range(previous->begin, previous->end) + " and " +
                     quoted(e->name) + " " + byte_range(e->begin, e->end) + " overlap in the data section");
    if (e->begin > expected) {
      const std::string before = previous ? "the previous tensor ends at " + std::to_string(expected)
                                          : std::string("the first tensor must start at 0");
      fail(path, tensor_label(e->name) + " starts at byte " + std::to_string(e->begin) + " of the data section, but " +
                     before + ": the data section has a gap");
    }
    expected = e->end;
    previous = e;
  }
  if (expected != data_size)
    fail(path, "the tensors hold " + std::to_string(expected) + " bytes but the data section has " +
                   std::to_string(data_size) + " (trailing bytes after the last tensor)");
}

// A bool byte other than 0 or 1 is undefined behaviour once read as a C++ bool, so it never gets that far.
void check_bool_bytes(const std::string& path, const std::string& name, const std::byte* data, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i)
    if (data[i] != std::byte{0} && data[i] != std::byte{1})
      fail(path, tensor_label(name) + ": BOOL element " + std::to_string(i) + " has byte value " +
                     std::to_string(std::to_integer<int>(data[i])) + " (only 0 and 1 are valid)");
}

// Opens path for reading and returns its size; refuses anything but a regular file.
std::uint64_t open_regular_file(const std::string& path, FileDescriptor& file) {
  // O_NONBLOCK: opening a FIFO would otherwise wait forever for a writer; fstat below refuses it instead.
  // (On regular files the flag changes nothing.)
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) fail_errno(path, "cannot open for reading");
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) fail_errno(path, "cannot stat");
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

// The header of a file of `size` bytes: its length (read first and bounded before anything is allocated), its
// tensors' entries, validated against the data section, and its metadata. `read(offset, out, n)` reads bytes.
struct Layout {
  std::uint64_t data_start = 0;  // 8 + header length
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
};

template <typename ReadBytes>
Layout read_layout(const std::string& path, std::uint64_t size, ReadBytes read) {
  if (size < 8)
    fail(path, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length (truncated?)");
  std::uint64_t header_size = 0;
  read(0, &header_size, 8);  // little-endian on disk and (static_assert) in memory
  if (header_size > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(header_size) + " is over the 100 MB limit (corrupt file?)");
  if (header_size > size - 8)
    fail(path, "header length " + std::to_string(header_size) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes); is the file truncated?");
  std::string text(header_size, '\0');
  read(8, text.data(), header_size);
  const json header = parse_header_json(path, text.data(), text.data() + text.size());
  if (!header.is_object()) fail(path, "header must be a JSON object, got " + std::string(header.type_name()));

  Layout layout;
  layout.data_start = 8 + header_size;
  const std::uint64_t data_size = size - layout.data_start;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__")
      layout.metadata = parse_metadata(path, it.value());
    else
      layout.entries.push_back(parse_entry(path, it.key(), it.value(), data_size));
  }
  std::vector<const Entry*> pointers;
  for (const Entry& e : layout.entries) pointers.push_back(&e);
  check_contiguous(path, std::move(pointers), data_size);
  return layout;
}

// Every tensor of a validated layout, each read straight into its own storage.
template <typename ReadBytes>
SafetensorsFile read_tensors(const std::string& path, Layout layout, ReadBytes read) {
  SafetensorsFile file;
  file.metadata = std::move(layout.metadata);
  for (const Entry& e : layout.entries) {
    const std::uint64_t nbytes = e.end - e.begin;
    Tensor t = Tensor::empty(e.shape, e.dtype);  // fresh, contiguous, offset 0
    if (nbytes > 0) read(layout.data_start + e.begin, t.impl().storage->data(), nbytes);
    if (e.dtype == DType::Bool) check_bool_bytes(path, e.name, t.impl().storage->data(), nbytes);
    file.tensors.emplace(e.name, std::move(t));
  }
  return file;
}

}  // namespace

SafetensorsFile parse_safetensors(const std::vector<std::byte>& bytes, const std::string& name_for_errors) {
  auto read = [&](std::uint64_t offset, void* out, std::uint64_t n) { std::memcpy(out, bytes.data() + offset, n); };
  return read_tensors(name_for_errors, read_layout(name_for_errors, bytes.size(), read), read);
}

// The header first, then exactly the bytes each tensor needs: a file is never read whole, so a huge or sparse
// file with a bad header costs one 8-byte read.
SafetensorsFile read_safetensors(const std::string& path) {
  FileDescriptor file(-1);
  const std::uint64_t size = open_regular_file(path, file);
  auto read = [&](std::uint64_t offset, void* out, std::uint64_t n) { read_exactly(path, file.fd, offset, out, n); };
  return read_tensors(path, read_layout(path, size, read), read);
}

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
