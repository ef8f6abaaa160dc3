// The safetensors header, read as hostile input (core/safetensors_header.h): streamed from the file through one SAX
// pass of nlohmann's parser straight into SafetensorsEntry structs. No JSON tree is built (a tree costs ~13 times
// the header: 1.3 GB for a 99 MB header of 1.55 million empty tensors), no copy of the header is held (it arrives
// through a 64 KiB window), and the entries (kMaxSafetensorsEntries) and each string (kMaxStringBytes, 16 MiB) are
// bounded, so a header of any size costs at most the strings it keeps, ~20 MB of entries and ~50 MB for the string
// being lexed, and is refused as soon as it passes a bound.
#include "core/safetensors_header.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/json_error_text.h"

namespace cppgrad::safetensors_detail {

void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("safetensors: " + path + ": " + what);
}

// A name or string from the file as it appears in a message: quoted, and cut short so that a hostile 100 MB name
// cannot flood a log. Called as (quoted)(s): unparenthesised, argument-dependent lookup also finds std::quoted.
std::string quoted(const std::string& s) {
  constexpr std::size_t kMaxShown = 80;
  if (s.size() <= kMaxShown) return "'" + s + "'";
  return "'" + s.substr(0, kMaxShown) + "...' (" + std::to_string(s.size()) + " bytes)";
}

std::string tensor_label(const std::string& name) { return "tensor " + (quoted)(name); }

namespace {

using json = nlohmann::json;

// The same limit as the reference (Rust) implementation: a real header is a few KB (a checkpoint's, with its
// tokenizer in the metadata, a few MB), so anything larger is corruption or an attempt to make us allocate.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
// A valid header nests three deep (header object -> entry object -> shape list); deeper JSON is hostile.
constexpr int kMaxJsonDepth = 8;
// No real tensor has more dims; the cap stops a header from declaring a million-dim zero-sized tensor.
constexpr std::size_t kMaxRank = 64;
// No string (a name, a dtype, a metadata value) may be longer: a checkpoint's longest, its BPE tokenizer's model text,
// is ~1 MB at GPT-2's 50,000 merges. nlohmann's lexer holds a string whole before the parser sees it (and doubles
// its buffer as it grows), so this bound, counted as the bytes arrive, is what keeps one string's cost small.
constexpr std::uint64_t kMaxStringBytes = std::uint64_t{16} << 20;
// No list in a valid header is longer than a shape (kMaxRank dims), and no object but the header and its metadata
// has more than 3 keys; this leaves room for any future field.
constexpr std::size_t kMaxListLength = 1024;

// "[begin, end]", built by appending (GCC 12 misreads `"[" + std::to_string(...)` here as an overlapping copy).
std::string byte_range(std::uint64_t begin, std::uint64_t end) {
  std::string s = "[";
  s.append(std::to_string(begin)).append(", ").append(std::to_string(end)).append("]");
  return s;
}

std::optional<StoredDType> dtype_from_code(const std::string& code) {
  for (const StoredDType d :
       {StoredDType::F32, StoredDType::F64, StoredDType::I64, StoredDType::BOOL, StoredDType::F16, StoredDType::BF16})
    if (code == stored_code(d)) return d;
  return std::nullopt;
}

// ------------------------------------------------------------------------------------- the header's bytes
// The header as nlohmann's lexer reads it: one byte at a time through a window of the file, refilled by `read`.
// A raw NUL byte is refused as the window loads it: JSON text cannot hold one (a string spells it \u0000), and
// nlohmann's lexer would take it for the end of the input and ignore whatever follows. Each byte handed over also
// goes through a two-state scan (in a string or not; a backslash escapes the next byte) that refuses a string
// longer than kMaxStringBytes before the lexer has buffered it. The lexer reads the bytes in order and stops at
// the first that is not JSON, so the scan sees only a valid prefix, where a '"' outside a string opens one.
class HeaderBytes {
 public:
  HeaderBytes(const std::string& path, const ReadBytes& read, std::uint64_t begin, std::uint64_t size)
      : path_(path), read_(read), begin_(begin), size_(size),
        window_(static_cast<std::size_t>(std::min<std::uint64_t>(size, kWindow))) {}
  std::uint64_t size() const { return size_; }
  char at(std::uint64_t pos) {  // pos < size()
    if (pos < loaded_ || pos >= loaded_ + filled_) load(pos);
    const char c = window_[static_cast<std::size_t>(pos - loaded_)];
    if (pos == scanned_) scan(c, pos), ++scanned_;
    return c;
  }

 private:
  static constexpr std::uint64_t kWindow = 1 << 16;
  void scan(char c, std::uint64_t pos) {
    if (!in_string_) {
      in_string_ = c == '"';
      string_begin_ = pos;
    } else if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"') {
      in_string_ = false;
    }
    if (in_string_ && pos - string_begin_ > kMaxStringBytes)
      fail(path_, "the header has a string of more than " + std::to_string(kMaxStringBytes) + " bytes (from header "
                  "offset " + std::to_string(string_begin_) + "): no name or metadata value is that long");
  }
  void load(std::uint64_t pos) {
    filled_ = static_cast<std::size_t>(std::min<std::uint64_t>(size_ - pos, kWindow));
    loaded_ = pos;
    read_(begin_ + pos, window_.data(), filled_);
    if (const void* nul = std::memchr(window_.data(), '\0', filled_))
      fail(path_, "header is not valid JSON: a NUL byte at header offset " +
                      std::to_string(pos + static_cast<std::uint64_t>(static_cast<const char*>(nul) - window_.data())));
  }

  const std::string& path_;
  const ReadBytes& read_;
  std::uint64_t begin_, size_;
  std::vector<char> window_;
  std::uint64_t loaded_ = 0;  // the header offset of window_[0]
  std::size_t filled_ = 0;    // how many bytes of window_ hold the header
  std::uint64_t scanned_ = 0, string_begin_ = 0;
  bool in_string_ = false, escaped_ = false;
};

// An input iterator over HeaderBytes, the interface nlohmann's parser reads any input through.
struct HeaderIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;
  HeaderBytes* bytes = nullptr;
  std::uint64_t pos = 0;
  char operator*() const { return bytes->at(pos); }
  HeaderIterator& operator++() {
    ++pos;
    return *this;
  }
  HeaderIterator operator++(int) {
    HeaderIterator before = *this;
    ++pos;
    return before;
  }
  bool operator==(const HeaderIterator& o) const { return pos == o.pos; }
};

// -------------------------------------------------------------------------------------------- the parse
// A value as it came, kept until its entry ends, so that every entry is judged in one fixed order of checks
// whatever order its fields have in the file.
struct RawNumber {
  enum Kind { non_negative, negative, non_integer, not_a_number } kind = not_a_number;
  std::uint64_t value = 0;      // non_negative
  std::int64_t signed_value = 0;  // negative
  const char* type = "";        // not_a_number: nlohmann's name of the JSON type ("string", "array", ...)
};
struct RawField {
  bool present = false;
  const char* type = nullptr;   // the JSON type when it is not the expected one (a string / a list), else nullptr
  std::string text;             // "dtype": the string
  std::vector<RawNumber> items; // "shape", "data_offsets": the list's values (at most kMaxListLength)
};
struct RawEntry {
  std::string name;
  RawField dtype, shape, offsets;
};

// What an open object or list is, which decides what its values mean.
enum class Role { header, entry, metadata, shape, offsets, ignored };

class HeaderParser final : public nlohmann::json_sax<json> {
 public:
  HeaderParser(const std::string& path, std::uint64_t data_size, SafetensorsHeader& out)
      : path_(path), data_size_(data_size), out_(out) {}

  bool null() override { return scalar("null"); }
  bool boolean(bool) override { return scalar("boolean"); }
  bool number_integer(number_integer_t v) override {  // nlohmann's lexer gives negative integers only here
    return scalar("number", {.kind = RawNumber::negative, .signed_value = v});
  }
  bool number_unsigned(number_unsigned_t v) override {
    return scalar("number", {.kind = RawNumber::non_negative, .value = v});
  }
  bool number_float(number_float_t, const string_t&) override {
    return scalar("number", {.kind = RawNumber::non_integer});
  }
  bool string(string_t& s) override { return scalar("string", {.type = "string"}, &s); }
  bool binary(binary_t&) override { return scalar("binary"); }
  bool start_object(std::size_t) override { return open(/*list=*/false); }
  bool start_array(std::size_t) override { return open(/*list=*/true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override;
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    fail(path_, "header is not valid JSON: " + json_error_text(e.what()));  // also a number like 1e999
  }

 private:
  struct Level {  // an object or list currently open
    bool list = false;
    Role role = Role::ignored;
    std::size_t elements = 0;               // a list's values or an object's keys so far
    std::unordered_set<std::size_t> keys;   // an ignored object's keys, hashed: only for telling a repeat
    std::string refusal;                    // what is wrong with this value, said once it has been read whole
  };

  [[noreturn]] void duplicate(const std::string& k) const {
    fail(path_, "duplicate key " + (quoted)(k) + " in the header JSON");
  }
  void count_in_list();
  bool scalar(const char* type, RawNumber number = {}, string_t* text = nullptr);
  bool open(bool list);
  bool close();
  RawField& field();
  void finish_entry();
  Shape entry_shape(const RawEntry& e) const;
  std::uint64_t byte_size(const std::string& name, const Shape& shape, StoredDType dtype) const;

  const std::string& path_;
  std::uint64_t data_size_;
  SafetensorsHeader& out_;
  std::vector<Level> open_;
  bool seen_metadata_ = false;
  std::string key_;                 // the last key read, for the value that follows it
  std::optional<RawEntry> entry_;   // the entry being read
  enum class Field { dtype, shape, offsets, other } field_ = Field::other;
  std::unordered_multimap<std::size_t, std::size_t> names_;  // hash of a tensor's name -> its index in entries
};

// Every value (a list or object is one too) counts towards the list it stands in.
void HeaderParser::count_in_list() {
  if (!open_.empty() && open_.back().list && ++open_.back().elements > kMaxListLength)
    fail(path_, "header JSON has a list of more than " + std::to_string(kMaxListLength) +
                    " values; the longest list in a safetensors header is a shape");
}

RawField& HeaderParser::field() {
  return field_ == Field::dtype ? entry_->dtype : field_ == Field::shape ? entry_->shape : entry_->offsets;
}

bool HeaderParser::key(string_t& k) {
  Level& top = open_.back();
  const auto count = [&](std::size_t limit, const std::string& what) {
    if (++top.elements > limit) fail(path_, "the header has more than " + std::to_string(limit) + " " + what);
  };
  switch (top.role) {
    case Role::header:
      if (k == "__metadata__") {
        if (seen_metadata_) duplicate(k);
        seen_metadata_ = true;
      } else {
        if (out_.entries.size() >= kMaxSafetensorsEntries)
          fail(path_, "the header lists more than " + std::to_string(kMaxSafetensorsEntries) +
                          " tensors, the most cppgrad reads (GPT-2 XL has 580)");
        const std::size_t h = std::hash<std::string_view>{}(k);
        for (auto [it, last] = names_.equal_range(h); it != last; ++it)
          if (out_.entries[it->second].name == k) duplicate(k);
      }
      break;
    case Role::metadata:
      count(kMaxSafetensorsEntries, "metadata keys, the most cppgrad reads");
      if (out_.metadata.count(k)) duplicate(k);
      break;
    case Role::entry: {
      count(kMaxListLength, "keys in one object (an entry has 3)");
      field_ = k == "dtype" ? Field::dtype : k == "shape" ? Field::shape : k == "data_offsets" ? Field::offsets
                                                                                                : Field::other;
      if (field_ != Field::other) {
        if (field().present) duplicate(k);
        field().present = true;
      } else if (!top.keys.insert(std::hash<std::string_view>{}(k)).second) {
        duplicate(k);  // an extra key, ignored, repeated
      }
      break;
    }
    default:
      count(kMaxListLength, "keys in one object (an entry has 3)");
      if (!top.keys.insert(std::hash<std::string_view>{}(k)).second) duplicate(k);
  }
  key_ = std::move(k);  // the parser's buffer, free to take: it starts the next token afresh
  return true;
}

bool HeaderParser::scalar(const char* type, RawNumber number, string_t* text) {
  count_in_list();
  if (open_.empty()) fail(path_, std::string("header must be a JSON object, got ") + type);
  switch (open_.back().role) {
    case Role::header:
      if (key_ == "__metadata__")
        fail(path_, std::string("\"__metadata__\" must be an object of strings, got ") + type);
      fail(path_, tensor_label(key_) + ": entry must be an object {\"dtype\", \"shape\", \"data_offsets\"}, got " +
                      type);
    case Role::metadata:
      if (!text)
        fail(path_, "\"__metadata__\" value for key " + (quoted)(key_) + " must be a string, got " + type);
      out_.metadata.emplace(std::move(key_), std::move(*text));
      break;
    case Role::entry:
      if (field_ == Field::other) break;
      if (field_ == Field::dtype && text) field().text = std::move(*text);
      else field().type = type;  // a "dtype" that is no string, a "shape" or "data_offsets" that is no list
      break;
    case Role::shape:
    case Role::offsets:
      if (number.kind == RawNumber::not_a_number) number.type = type;
      field().items.push_back(number);
      break;
    case Role::ignored:
      break;
  }
  return true;
}

bool HeaderParser::open(bool list) {
  count_in_list();
  if (open_.size() >= static_cast<std::size_t>(kMaxJsonDepth))
    fail(path_, "header JSON nests more than " + std::to_string(kMaxJsonDepth) + " levels deep; a safetensors "
                "header needs 3");
  const char* type = list ? "array" : "object";
  Role role = Role::ignored;
  std::string refusal;  // a value of the wrong type is refused at its end, after the checks of what it holds
  if (open_.empty()) {
    if (list) fail(path_, "header must be a JSON object, got array");
    role = Role::header;
  } else {
    switch (open_.back().role) {
      case Role::header:
        if (key_ == "__metadata__" && list) {
          refusal = "\"__metadata__\" must be an object of strings, got array";
        } else if (key_ == "__metadata__") {
          role = Role::metadata;
        } else if (list) {
          refusal = tensor_label(key_) + ": entry must be an object {\"dtype\", \"shape\", \"data_offsets\"}, got array";
        } else {
          entry_.emplace().name = std::move(key_);
          role = Role::entry;
        }
        break;
      case Role::metadata:
        refusal = "\"__metadata__\" value for key " + (quoted)(key_) + " must be a string, got " + type;
        break;
      case Role::entry:
        if (field_ == Field::other) break;
        if (list && field_ != Field::dtype) role = field_ == Field::shape ? Role::shape : Role::offsets;
        else field().type = type;
        break;
      case Role::shape:
      case Role::offsets:
        field().items.push_back({.type = type});
        break;
      case Role::ignored:
        break;
    }
  }
  open_.emplace_back().list = list;
  open_.back().role = role;
  open_.back().refusal = std::move(refusal);
  return true;
}

bool HeaderParser::close() {
  const Role role = open_.back().role;
  if (!open_.back().refusal.empty()) fail(path_, open_.back().refusal);
  open_.pop_back();
  if (role == Role::entry) finish_entry();
  if (role == Role::shape || role == Role::offsets) field_ = Field::other;  // the list's values are in
  return true;
}

Shape HeaderParser::entry_shape(const RawEntry& e) const {
  const std::string who = tensor_label(e.name);
  if (e.shape.type) fail(path_, who + ": \"shape\" must be a list of integers, got " + e.shape.type);
  if (e.shape.items.size() > kMaxRank)
    fail(path_, who + ": shape has " + std::to_string(e.shape.items.size()) + " dims, more than the " +
                    std::to_string(kMaxRank) + " cppgrad supports");
  Shape shape;
  for (const RawNumber& d : e.shape.items) {
    if (d.kind == RawNumber::non_integer) fail(path_, who + ": \"shape\" must be a list of integers, found a "
                                                            "non-integer number");
    if (d.kind == RawNumber::not_a_number)
      fail(path_, who + ": \"shape\" must be a list of integers, found a " + d.type);
    if (d.kind == RawNumber::negative)
      fail(path_, who + ": negative size " + std::to_string(d.signed_value) + " in shape");
    if (d.value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(path_, who + ": size " + std::to_string(d.value) + " in shape does not fit in int64");
    shape.push_back(static_cast<std::int64_t>(d.value));
  }
  return shape;
}

// How many bytes a tensor of this shape and dtype holds. The product of the non-zero sizes must fit in int64
// even when some size is 0: Tensor computes strides (suffix products) in int64 regardless.
std::uint64_t HeaderParser::byte_size(const std::string& name, const Shape& shape, StoredDType dtype) const {
  std::int64_t product = 1;
  bool has_zero = false;
  for (const std::int64_t d : shape) {
    if (d == 0) {
      has_zero = true;
    } else if (__builtin_mul_overflow(product, d, &product)) {
      fail(path_, tensor_label(name) + ": shape " + shape_str(shape) + " has more elements than int64 can count");
    }
  }
  if (has_zero) return 0;
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(product), stored_size(dtype), &bytes))
    fail(path_, tensor_label(name) + ": shape " + shape_str(shape) + " has too many bytes to count");
  return bytes;
}

// The entry judged whole, in the reader's one order of checks: the fields present, the dtype, the shape, the
// byte size, the offsets.
void HeaderParser::finish_entry() {
  const RawEntry& e = *entry_;
  const std::string who = tensor_label(e.name);
  using Required = std::pair<const char*, const RawField*>;
  for (const auto& [name, f] : {Required{"dtype", &e.dtype}, Required{"shape", &e.shape}, Required{"data_offsets", &e.offsets}})
    if (!f->present) fail(path_, who + ": entry has no \"" + name + "\"");
  if (e.dtype.type) fail(path_, who + ": \"dtype\" must be a string, got " + e.dtype.type);
  const std::optional<StoredDType> dtype = dtype_from_code(e.dtype.text);
  if (!dtype)
    fail(path_, "unknown dtype " + (quoted)(e.dtype.text) + " for " + who +
                    " (cppgrad reads F32, F64, I64, BOOL, and F16 and BF16 as float32)");
  Shape shape = entry_shape(e);
  const std::uint64_t nbytes = byte_size(e.name, shape, *dtype);

  const auto& off = e.offsets.items;
  if (e.offsets.type || off.size() != 2)
    fail(path_, who + ": \"data_offsets\" must be a list [begin, end] of two non-negative integers");
  if (off[0].kind != RawNumber::non_negative || off[1].kind != RawNumber::non_negative)
    fail(path_, who + ": \"data_offsets\" must be two non-negative integers [begin, end]");
  const std::uint64_t begin = off[0].value, end = off[1].value;
  const std::string range = byte_range(begin, end);
  if (begin > end) fail(path_, who + ": data_offsets " + range + " have begin > end");
  if (end > data_size_)
    fail(path_, who + ": data_offsets " + range + " run past the end of the data section (" +
                    std::to_string(data_size_) + " bytes); is the file truncated?");
  if (end - begin != nbytes)
    fail(path_, who + ": " + e.dtype.text + " " + shape_str(shape) + " needs " + std::to_string(nbytes) +
                    " bytes but data_offsets " + range + " hold " + std::to_string(end - begin));
  names_.emplace(std::hash<std::string_view>{}(e.name), out_.entries.size());
  out_.entries.push_back({std::move(entry_->name), *dtype, std::move(shape), begin, end});
  entry_.reset();
}

// The data section must be exactly the tensors' bytes, one after another: sorted by offset, the first starts at 0,
// each starts where the previous ended, and the last ends at the end of the file. That rules out overlapping
// tensors (which would alias in PyTorch but not here), gaps and trailing bytes, as the reference implementation
// does. An empty tensor holds no bytes but must still stand where the chain is, not inside another tensor.
void check_contiguous(const std::string& path, const std::vector<SafetensorsEntry>& all, std::uint64_t data_size) {
  std::vector<const SafetensorsEntry*> entries;
  entries.reserve(all.size());
  for (const SafetensorsEntry& e : all) entries.push_back(&e);
  std::sort(entries.begin(), entries.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end != b->end ? a->end < b->end : a->name < b->name;
  });
  std::uint64_t expected = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry* e : entries) {
    if (e->begin == e->end && e->begin == expected) continue;  // an empty tensor where the chain stands
    if (e->begin < expected)
      fail(path, "tensors " + (quoted)(previous->name) + " " + byte_range(previous->begin, previous->end) + " and " +
                     (quoted)(e->name) + " " + byte_range(e->begin, e->end) + " overlap in the data section");
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

}  // namespace

SafetensorsHeader read_header(const std::string& path, std::uint64_t size, const ReadBytes& read) {
  if (size < 8)
    fail(path, "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length (truncated?)");
  std::uint64_t header_size = 0;
  read(0, &header_size, 8);  // little-endian on disk and (static_assert in safetensors.cpp) in memory
  if (header_size > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(header_size) + " is over the 100 MB limit (corrupt file?)");
  if (header_size > size - 8)
    fail(path, "header length " + std::to_string(header_size) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes); is the file truncated?");
  SafetensorsHeader header;
  header.data_start = 8 + header_size;
  const std::uint64_t data_size = size - header.data_start;
  HeaderBytes bytes(path, read, 8, header_size);
  HeaderParser parser(path, data_size, header);
  json::sax_parse(HeaderIterator{&bytes, 0}, HeaderIterator{&bytes, header_size}, &parser);
  check_contiguous(path, header.entries, data_size);
  return header;
}

}  // namespace cppgrad::safetensors_detail
