#pragma once
// Text files and strict UTF-8: the bytes of a (bounded) file, decoded into Unicode code points and back.
//
// Strict means what RFC 3629 allows and nothing else: no overlong forms (C0 80 for U+0000), no UTF-16 surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF. A character-level tokenizer built on a lenient decoder would quietly
// give one character two ids, so a bad byte is an error that names where it is.
#include <cstdint>
#include <string>
#include <string_view>

namespace cppgrad::data {

// 256 MiB: what a command builds from a text is a multiple of it (measured on the worst text, one run of a byte with
// no split: tokenize encode 24 bytes a byte, eval --data 32, train 18), so the largest file costs at most 8 GiB, a
// third of a 24 GB machine. (1 GiB until issue 40: 32 GB at worst.) The King James Bible is 4.3 MB, enwik8 100 MB.
inline constexpr std::uint64_t kMaxTextFileBytes = std::uint64_t{256} << 20;

// The file's bytes: the one bounded way every program reads a user's file. Refuses (std::runtime_error
// "<path>: ...") a missing or unreadable file, a directory, a pipe or a device (they have no size, and /dev/zero no
// end; a FIFO is refused without waiting for its writer), and a file over max_bytes before reading any of it (its
// size is looked up first); a file that grows past the bound while it is read is refused as soon as it passes it.
std::string read_text_file(const std::string& path, std::uint64_t max_bytes = kMaxTextFileBytes);

// Strict UTF-8 -> code points. std::invalid_argument "invalid UTF-8 at byte offset N: <why>", N the 0-based
// offset of the first byte of the first bad sequence.
std::u32string decode_utf8(std::string_view bytes);

// Any bytes -> valid UTF-8 to show: each well-formed sequence as it is, and each maximal part of a bad one (a stray
// continuation byte, a sequence cut short, at the end too, an overlong or surrogate form) as one U+FFFD (Unicode's
// "maximal subpart" rule, as WHATWG's decoder and Python's errors="replace" apply it). A BPE model's sample may end
// in the middle of a character: it is shown as U+FFFD, never dropped.
std::string to_valid_utf8(std::string_view bytes);

// The length (1 to 4) of the well-formed UTF-8 sequence starting at bytes[i], or 0 if none starts there (RFC 3629 as
// decode_utf8 reads it: no overlong forms, no surrogates, nothing past U+10FFFF, nothing cut short). i < bytes.size().
std::size_t utf8_sequence_length(std::string_view bytes, std::size_t i);

// Code points -> UTF-8 (1 to 4 bytes each). std::invalid_argument for a surrogate or a value above U+10FFFF.
std::string encode_utf8(std::u32string_view text);
std::string encode_utf8(char32_t c);

// "U+0041" (at least 4 hex digits): how errors name a character that may not print.
std::string code_point_name(char32_t c);

}  // namespace cppgrad::data
