#include "data/utf8.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace cppgrad::data {

namespace {

// Closes the descriptor on every path out of read_text_file.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() { if (fd >= 0) ::close(fd); }
};

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw std::runtime_error(fmt::format("{}: {}", path, why));
}

}  // namespace

std::string read_text_file(const std::string& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer that may never come; fstat below refuses it.
  const FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) refuse(path, fmt::format("cannot open: {}", std::strerror(errno)));
  // fstat on the open descriptor, not stat on the name: the size checked is the size of the file being read.
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) refuse(path, fmt::format("cannot stat: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) refuse(path, "is a directory, not a text file");
  // A pipe or a device (/dev/zero, /dev/urandom, a terminal) has no size, and may have no end: only a file is read.
  if (S_ISFIFO(st.st_mode)) refuse(path, "is a pipe, not a file (save what it carries to a file, then give that)");
  if (!S_ISREG(st.st_mode)) refuse(path, "is a device or socket, not a file");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    refuse(path, fmt::format("is {} bytes, more than the limit of {} bytes", st.st_size, max_bytes));

  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ::ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      refuse(path, fmt::format("cannot read: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::uint64_t>(n) > max_bytes)  // grew while it was read: stop at the bound
      refuse(path, fmt::format("holds more than the limit of {} bytes", max_bytes));
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

std::string code_point_name(char32_t c) { return fmt::format("U+{:04X}", static_cast<std::uint32_t>(c)); }

namespace {

// Decodes bytes[i..] into *out (nothing is stored when out is null), throwing at the first bad sequence with what is
// wrong with it.
void decode_from(std::string_view bytes, std::size_t i, std::u32string* out) {
  const std::size_t n = bytes.size();
  while (i < n) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    if (lead < 0x80) {
      if (out) out->push_back(lead);
      ++i;
      continue;
    }
    const auto bad = [&](const std::string& why) {
      return std::invalid_argument(fmt::format("invalid UTF-8 at byte offset {}: {}", i, why));
    };
    // The lead byte says how many bytes the sequence has and gives the top bits of the code point.
    std::size_t length = 0;
    char32_t cp = 0;
    if (lead < 0xC0) throw bad(fmt::format("continuation byte 0x{:02X} without a lead byte", lead));
    if (lead >= 0xF8) throw bad(fmt::format("byte 0x{:02X} never occurs in UTF-8", lead));
    if (lead < 0xE0) {
      length = 2, cp = lead & 0x1F;  // 110xxxxx
    } else if (lead < 0xF0) {
      length = 3, cp = lead & 0x0F;  // 1110xxxx
    } else {
      length = 4, cp = lead & 0x07;  // 11110xxx (F5..F7 give values above U+10FFFF, refused below)
    }
    for (std::size_t k = 1; k < length; ++k) {
      if (i + k >= n) throw bad(fmt::format("truncated: a {}-byte sequence cut off by the end of the text", length));
      const auto next = static_cast<unsigned char>(bytes[i + k]);
      if ((next & 0xC0) != 0x80)
        throw bad(fmt::format("truncated: a {}-byte sequence whose byte {} is 0x{:02X}, not a continuation byte",
                              length, k + 1, next));
      cp = (cp << 6) | (next & 0x3F);
    }
    // The smallest code point each length may carry: anything less has a shorter form (overlong).
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[length])
      throw bad(fmt::format("overlong {}-byte form of {}", length, code_point_name(cp)));
    if (cp >= 0xD800 && cp <= 0xDFFF) throw bad(fmt::format("encodes the UTF-16 surrogate {}", code_point_name(cp)));
    if (cp > 0x10FFFF) throw bad(fmt::format("encodes {}, above U+10FFFF", code_point_name(cp)));
    if (out) out->push_back(cp);
    i += length;
  }
}

}  // namespace

std::u32string decode_utf8(std::string_view bytes) {
  // The code points are counted first, so the text is checked before anything is allocated for it (a 200 MB text
  // with one bad byte at its end once took 1 GB to refuse) and the string is sized once.
  std::size_t count = 0, i = 0;
  while (i < bytes.size()) {
    const std::size_t length = utf8_sequence_length(bytes, i);
    if (length == 0) {
      decode_from(bytes, i, nullptr);  // throws, saying what is wrong at byte i
      throw std::logic_error("decode_utf8: utf8_sequence_length and the decoder disagree");
    }
    ++count, i += length;
  }
  std::u32string out;
  out.reserve(count);
  decode_from(bytes, 0, &out);
  return out;
}

std::string encode_utf8(char32_t c) {
  const auto v = static_cast<std::uint32_t>(c);
  if ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
    throw std::invalid_argument(fmt::format("encode_utf8: {} is not a Unicode scalar value", code_point_name(c)));
  std::string out;
  if (v < 0x80) {
    out += static_cast<char>(v);
  } else if (v < 0x800) {
    out += static_cast<char>(0xC0 | (v >> 6));
    out += static_cast<char>(0x80 | (v & 0x3F));
  } else if (v < 0x10000) {
    out += static_cast<char>(0xE0 | (v >> 12));
    out += static_cast<char>(0x80 | ((v >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (v & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (v >> 18));
    out += static_cast<char>(0x80 | ((v >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((v >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (v & 0x3F));
  }
  return out;
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char32_t c : text) out += encode_utf8(c);
  return out;
}

namespace {

// The length of the well-formed sequence at bytes[i], or 0; `taken` is the bytes of its maximal valid prefix (at
// least 1): what one U+FFFD replaces when it is cut short or bad. Table 3-7 of the Unicode standard: the second byte's
// range depends on the first (E0: A0..BF no overlong, ED: 80..9F no surrogate, F0: 90..BF, F4: 80..8F).
std::size_t sequence_at(std::string_view bytes, std::size_t i, std::size_t& taken) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  const unsigned char lead = b(i);
  taken = 1;
  if (lead < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) n = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) n = 3, lo = lead == 0xE0 ? 0xA0 : 0x80, hi = lead == 0xED ? 0x9F : 0xBF;
  else if (lead >= 0xF0 && lead <= 0xF4) n = 4, lo = lead == 0xF0 ? 0x90 : 0x80, hi = lead == 0xF4 ? 0x8F : 0xBF;
  else return 0;  // a continuation byte, C0, C1, F5..FF: never a lead
  for (std::size_t k = 1; k < n; ++k) {
    if (i + k >= bytes.size()) return 0;
    const unsigned char c = b(i + k);
    if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return 0;
    taken = k + 1;
  }
  return n;
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view bytes, std::size_t i) {
  std::size_t taken = 1;
  return sequence_at(bytes, i, taken);
}

std::string to_valid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    std::size_t taken = 1;
    const std::size_t n = sequence_at(bytes, i, taken);
    if (n > 0) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      i += taken;
    }
  }
  return out;
}

}  // namespace cppgrad::data
