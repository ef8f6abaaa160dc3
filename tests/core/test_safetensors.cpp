// safetensors I/O: the golden files read with the right dtypes, shapes and values; write -> read round trips;
// and a hostile-input suite: every malformed file is refused with a message naming the problem, and no
// truncation or single-byte corruption of a small file can crash the reader.
#include "core/ops/reduce.h"
#include "core/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "test_paths.h"

namespace cppgrad {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

using test::golden_dir;
using test::TempDir;

std::vector<std::byte> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

void write_bytes(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A file built by hand: the 8-byte length (the header's own size unless told otherwise), header, data.
std::vector<std::byte> make_file(const std::string& header, const std::vector<int>& data = {}) {
  std::vector<std::byte> out(8);
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  for (int v : data) out.push_back(static_cast<std::byte>(v));
  return out;
}

std::vector<std::byte> with_header_length(std::vector<std::byte> bytes, std::uint64_t n) {
  std::memcpy(bytes.data(), &n, 8);
  return bytes;
}

std::uint64_t header_length(const std::vector<std::byte>& bytes) {
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return n;
}

// The message parse_safetensors refuses these bytes with, or "(accepted)".
std::string refusal(const std::vector<std::byte>& bytes) {
  try {
    parse_safetensors(bytes, "mem.safetensors");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(accepted)";
}

// One well-formed tensor: x = F32 [2], bytes [0, 8).
const std::string kValidHeader = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
const std::vector<int> kEightBytes(8, 0);

std::vector<std::byte> valid_file() { return make_file(kValidHeader, kEightBytes); }

// A small file with every dtype, a scalar and metadata, written by our own writer (for the fuzz-style tests).
std::vector<std::byte> small_written_file(const TempDir& dir) {
  const fs::path path = dir.path / "small.safetensors";
  write_safetensors(path.string(),
                    {{"f32", Tensor::from_vector<float>({1.5f, -2.f}, {2})},
                     {"f64", Tensor::scalar(3.25, DType::Float64)},
                     {"i64", Tensor::from_vector<std::int64_t>({7, -1, 4}, {3})},
                     {"mask", Tensor::from_vector<bool>({true, false}, {1, 2})}},
                    {{"kind", "test"}});
  return read_bytes(path);
}

// ------------------------------------------------------------------------------------------- golden files
TEST(Safetensors, ReadsEveryGoldenFile) {
  const fs::path dir = golden_dir();
  ASSERT_TRUE(fs::is_directory(dir)) << dir << " is not a directory; set CPPGRAD_GOLDEN_DIR to the golden cases";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".safetensors") continue;
    SCOPED_TRACE(entry.path().string());
    SafetensorsFile f;
    ASSERT_NO_THROW(f = read_safetensors(entry.path().string()));
    EXPECT_FALSE(f.tensors.empty());
    EXPECT_EQ(f.metadata.count("kind"), 1u) << "every golden case names its kind";
    for (const auto& [name, t] : f.tensors) {
      EXPECT_TRUE(t.is_contiguous()) << name;
      EXPECT_FALSE(t.requires_grad()) << name;
    }
    ++files;
  }
  EXPECT_GT(files, 0) << "no *.safetensors files in " << dir;
}

// The checks below hold for any directory of golden cases (the committed tests/golden, or CPPGRAD_GOLDEN_DIR):
// they follow the file's own shapes and metadata.
TEST(Safetensors, ReadsGoldenSoftmax) {
  const SafetensorsFile f = read_safetensors((golden_dir() / "softmax.safetensors").string());
  ASSERT_EQ(f.tensors.count("input.input"), 1u);
  const Tensor& x = f.tensors.at("input.input");
  const Tensor& y = f.tensors.at("output.output");
  EXPECT_EQ(x.dtype(), DType::Float64);
  EXPECT_EQ(y.shape(), x.shape());
  EXPECT_EQ(f.metadata.at("kind"), "softmax");
  // Softmax rows sum to one along the file's dim: a check that the bytes landed where they belong.
  const std::int64_t dim = std::stoll(f.metadata.at("dim"));
  const Tensor sums = sum(y, {dim});
  ASSERT_GT(sums.numel(), 1);
  for (const double s : sums.to_double_vector()) EXPECT_NEAR(s, 1.0, 1e-12);
  EXPECT_NE(x.to_double_vector(), y.to_double_vector()) << "input and output must be different tensors";
}

TEST(Safetensors, ReadsGoldenCrossEntropyTarget) {
  const SafetensorsFile f = read_safetensors((golden_dir() / "cross_entropy_ignore_index.safetensors").string());
  const Tensor& logits = f.tensors.at("input.input");
  const Tensor& target = f.tensors.at("input.target");
  EXPECT_EQ(target.dtype(), DType::Int64);
  ASSERT_GE(logits.dim(), 2);
  EXPECT_EQ(target.numel() * logits.shape()[1], logits.numel()) << "one target per position, classes at dim 1";
  const std::int64_t classes = logits.shape()[1], ignore = std::stoll(f.metadata.at("ignore_index"));
  bool ignored = false, counted = false;
  for (const std::int64_t t : target.to_vector<std::int64_t>()) {
    EXPECT_TRUE(t == ignore || (t >= 0 && t < classes)) << t;
    (t == ignore ? ignored : counted) = true;
  }
  EXPECT_TRUE(ignored && counted) << "the case must ignore some targets and count others";
  EXPECT_EQ(f.tensors.at("output.output").shape(), Shape{}) << "the loss is a scalar";
}

TEST(Safetensors, ReadsGoldenAttentionMask) {
  const SafetensorsFile f = read_safetensors((golden_dir() / "multi_head_attention_cross.safetensors").string());
  const Tensor& mask = f.tensors.at("input.mask");
  const Shape& kv = f.tensors.at("input.key_value").shape();  // [B, Lk, D]
  EXPECT_EQ(mask.dtype(), DType::Bool);
  EXPECT_EQ(mask.shape(), (Shape{kv[0], 1, 1, kv[1]}));
  EXPECT_EQ(f.metadata.at("mask"), "key_padding");
  const std::vector<bool> m = mask.to_vector<bool>();
  EXPECT_NE(std::count(m.begin(), m.end(), false), 0) << "some keys are padding";
  EXPECT_NE(std::count(m.begin(), m.end(), true), 0);
}

TEST(Safetensors, GoldenFileSurvivesRewrite) {
  TempDir dir;
  const SafetensorsFile a = read_safetensors((golden_dir() / "multi_head_attention_cross.safetensors").string());
  const std::string copy = (dir.path / "copy.safetensors").string();
  write_safetensors(copy, a.tensors, a.metadata);
  const SafetensorsFile b = read_safetensors(copy);
  EXPECT_EQ(a.metadata, b.metadata);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    SCOPED_TRACE(name);
    const Tensor& u = b.tensors.at(name);
    EXPECT_EQ(u.dtype(), t.dtype());
    EXPECT_EQ(u.shape(), t.shape());
    EXPECT_EQ(u.to_double_vector(), t.to_double_vector());
  }
}

// ------------------------------------------------------------------------------------------- round trips
TEST(Safetensors, RoundTripsAllDtypes) {
  TempDir dir;
  const std::string path = (dir.path / "all.safetensors").string();
  const Tensor transposed = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);
  ASSERT_FALSE(transposed.is_contiguous());
  const std::map<std::string, Tensor> tensors = {
      {"f32", Tensor::from_vector<float>({1.5f, -0.25f, 3e38f, -0.0f}, {2, 2})},
      {"f64.transposed", transposed},
      {"f64.row", Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}).select(0, 1)},  // contiguous, offset 3
      {"f64.scalar", Tensor::scalar(-7.125, DType::Float64)},
      {"i64", Tensor::from_vector<std::int64_t>({INT64_MIN, -1, 0, INT64_MAX}, {4})},
      {"bool", Tensor::from_vector<bool>({true, false, false, true, true, false}, {3, 1, 2})},
      {"empty", Tensor::empty({0, 3}, DType::Float32)},
  };
  const std::map<std::string, std::string> metadata = {{"kind", "round_trip"}, {"note", "ünïcödé, \"quotes\""}};
  write_safetensors(path, tensors, metadata);

  const SafetensorsFile f = read_safetensors(path);
  EXPECT_EQ(f.metadata, metadata);
  ASSERT_EQ(f.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    const Tensor& u = f.tensors.at(name);
    EXPECT_EQ(u.dtype(), t.dtype());
    EXPECT_EQ(u.shape(), t.shape());
    EXPECT_TRUE(u.is_contiguous());
  }
  EXPECT_EQ(f.tensors.at("f32").to_vector<float>(), (std::vector<float>{1.5f, -0.25f, 3e38f, -0.0f}));
  EXPECT_EQ(f.tensors.at("f64.transposed").to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(f.tensors.at("f64.row").to_vector<double>(), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(f.tensors.at("f64.scalar").item<double>(), -7.125);
  EXPECT_EQ(f.tensors.at("i64").to_vector<std::int64_t>(), (std::vector<std::int64_t>{INT64_MIN, -1, 0, INT64_MAX}));
  EXPECT_EQ(f.tensors.at("bool").to_vector<bool>(), (std::vector<bool>{true, false, false, true, true, false}));
  EXPECT_EQ(f.tensors.at("empty").numel(), 0);

  // Layout: the data section starts 8-byte aligned and holds exactly the tensors' bytes, back to back.
  const std::vector<std::byte> bytes = read_bytes(path);
  const std::uint64_t n = header_length(bytes);
  EXPECT_EQ((8 + n) % 8, 0u);
  EXPECT_EQ(bytes.size() - 8 - n, 4u * 4 + 6 * 8 + 3 * 8 + 8 + 4 * 8 + 6 * 1 + 0);

  // Only the target file is left: the temporary was renamed over it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
}

TEST(Safetensors, RoundTripsWithoutMetadata) {
  TempDir dir;
  const std::string path = (dir.path / "plain.safetensors").string();
  write_safetensors(path, {{"w", Tensor::from_vector<float>({1, 2, 3}, {3})}});
  const SafetensorsFile f = read_safetensors(path);
  EXPECT_TRUE(f.metadata.empty());
  EXPECT_EQ(f.tensors.at("w").to_vector<float>(), (std::vector<float>{1, 2, 3}));

  write_safetensors(path, {});  // no tensors at all is still a valid file, and overwrites the old one
  const SafetensorsFile empty = read_safetensors(path);
  EXPECT_TRUE(empty.tensors.empty());
  EXPECT_TRUE(empty.metadata.empty());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
}

TEST(Safetensors, WriteFailureNamesPathAndLeavesNoTempFile) {
  TempDir dir;
  const std::string path = (dir.path / "no_such_dir" / "x.safetensors").string();
  try {
    write_safetensors(path, {{"w", Tensor::scalar(1.0)}});
    FAIL() << "writing into a missing directory should throw";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("safetensors: " + path + ": "));
    EXPECT_THAT(e.what(), HasSubstr("does not exist"));
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 0);
}

TEST(Safetensors, WriteRefusesReservedNameAndUndefinedTensor) {
  TempDir dir;
  const std::string path = (dir.path / "x.safetensors").string();
  EXPECT_THROW(write_safetensors(path, {{"__metadata__", Tensor::scalar(1.0)}}), std::runtime_error);
  EXPECT_THROW(write_safetensors(path, {{"w", Tensor()}}), std::runtime_error);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 0);
}

TEST(Safetensors, ReadRefusesMissingFileAndDirectory) {
  TempDir dir;
  const std::string missing = (dir.path / "missing.safetensors").string();
  EXPECT_THAT(refusal({}), HasSubstr("file is 0 bytes"));
  try {
    read_safetensors(missing);
    FAIL() << "reading a missing file should throw";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("safetensors: " + missing + ": cannot open for reading: No such file"));
  }
  try {
    read_safetensors(dir.path.string());
    FAIL() << "reading a directory should throw";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a regular file"));
  }
}

TEST(Safetensors, ReadsFileWrittenByHand) {
  // The reader must not depend on our writer's habits: no padding, unaligned data, unsorted keys.
  const std::vector<std::byte> bytes = make_file(
      R"({"b":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]},"a":{"shape":[],"data_offsets":[1,9],"dtype":"I64"}})",
      {1, 42, 0, 0, 0, 0, 0, 0, 0});
  const SafetensorsFile f = parse_safetensors(bytes, "mem");
  EXPECT_EQ(f.tensors.at("a").item<std::int64_t>(), 42);
  EXPECT_EQ(f.tensors.at("b").to_vector<bool>(), std::vector<bool>{true});
}

// ------------------------------------------------------------------------------------------- hostile input
struct BadFile {
  const char* name;
  std::vector<std::byte> bytes;
  const char* expected;  // a distinctive part of the message
};

std::ostream& operator<<(std::ostream& os, const BadFile& c) { return os << c.name; }

std::string f32_entry(const std::string& shape, const std::string& offsets) {
  return R"({"x":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}";
}

std::vector<BadFile> bad_files() {
  const std::vector<std::byte> valid = valid_file();
  const std::vector<std::byte> truncated_data(valid.begin(), valid.end() - 1);
  std::string deep = R"({"x":)" + std::string(20, '[') + std::string(20, ']') + "}";
  std::string many_dims = "[1";
  for (int i = 0; i < 64; ++i) many_dims += ",1";
  many_dims += "]";
  return {
      {"Empty", {}, "file is 0 bytes, too short for the 8-byte header length"},
      {"ShorterThanLength", std::vector<std::byte>(5), "file is 5 bytes, too short"},
      {"TruncatedDataSection", truncated_data, "tensor 'x': data_offsets [0, 8] run past the end of the data section"},
      {"HeaderLengthPastEnd", with_header_length(valid, valid.size()), "runs past the end of the file"},
      {"HeaderLengthHuge", with_header_length(valid, std::uint64_t{1} << 63), "over the 100 MB limit"},
      {"GarbageJson", make_file(R"({"x": nope})"), "header is not valid JSON"},
      {"TrailingGarbage", make_file(kValidHeader + "xyz", kEightBytes), "header is not valid JSON"},
      {"HeaderIsArray", make_file("[1, 2]"), "header must be a JSON object, got array"},
      {"EntryNotObject", make_file(R"({"x": 3})"), "tensor 'x': entry must be an object"},
      {"MissingDtype", make_file(R"({"x":{"shape":[],"data_offsets":[0,4]}})"), "tensor 'x': entry has no \"dtype\""},
      {"MissingOffsets", make_file(R"({"x":{"dtype":"F32","shape":[]}})"), "entry has no \"data_offsets\""},
      {"DtypeNotString", make_file(R"({"x":{"dtype":5,"shape":[],"data_offsets":[0,4]}})"),
       "\"dtype\" must be a string, got number"},
      {"UnknownDtype", make_file(R"({"x":{"dtype":"I32","shape":[2],"data_offsets":[0,4]}})", {0, 0, 0, 0}),
       "unknown dtype 'I32' for tensor 'x' (cppgrad reads F32, F64, I64, BOOL, and F16 and BF16 as float32)"},
      {"ShapeNotList", make_file(f32_entry(R"("2")", "[0,8]"), kEightBytes), "\"shape\" must be a list of integers"},
      {"ShapeHasFloat", make_file(f32_entry("[2.0]", "[0,8]"), kEightBytes), "found a non-integer number"},
      {"NegativeShape", make_file(f32_entry("[-1, 2]", "[0,8]"), kEightBytes), "negative size -1 in shape"},
      {"ShapeElementsOverflow", make_file(f32_entry("[4294967296, 4294967296, 0]", "[0,0]")),
       "has more elements than int64 can count"},
      {"ShapeBytesOverflow", make_file(f32_entry("[4611686018427387904]", "[0,8]"), kEightBytes),
       "has too many bytes to count"},
      {"TooManyDims", make_file(f32_entry(many_dims, "[0,4]"), {0, 0, 0, 0}), "more than the 64 cppgrad supports"},
      {"ShapeBytesMismatch", make_file(f32_entry("[3]", "[0,8]"), kEightBytes),
       "F32 [3] needs 12 bytes but data_offsets [0, 8] hold 8"},
      {"OffsetsPastEnd", make_file(f32_entry("[4]", "[0,16]"), kEightBytes),
       "data_offsets [0, 16] run past the end of the data section (8 bytes)"},
      {"BeginAfterEnd", make_file(f32_entry("[2]", "[8,0]"), kEightBytes), "data_offsets [8, 0] have begin > end"},
      {"NegativeOffset", make_file(f32_entry("[2]", "[-8,0]"), kEightBytes), "must be two non-negative integers"},
      {"FloatOffset", make_file(f32_entry("[2]", "[0,8.0]"), kEightBytes), "must be two non-negative integers"},
      {"OneOffset", make_file(f32_entry("[2]", "[8]"), kEightBytes), "must be a list [begin, end]"},
      {"OverlappingOffsets",
       make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                 std::vector<int>(12, 0)),
       "tensors 'a' [0, 8] and 'b' [4, 12] overlap"},
      {"BoolByteTwo", make_file(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", {0, 1, 2}),
       "tensor 'm': BOOL element 2 has byte value 2"},
      {"MetadataValueNotString", make_file(R"({"__metadata__":{"kind":"x","k":1}})"),
       "\"__metadata__\" value for key 'k' must be a string, got number"},
      {"MetadataNotObject", make_file(R"({"__metadata__":["k"]})"), "\"__metadata__\" must be an object of strings"},
      {"DuplicateKey", make_file(R"({"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"x":{}})", {0, 0, 0, 0}),
       "duplicate key 'x'"},
      {"DeepNesting", make_file(deep), "nests more than 8 levels deep"},
  };
}

class SafetensorsRefuses : public testing::TestWithParam<BadFile> {};

TEST_P(SafetensorsRefuses, WithClearMessage) {
  const BadFile& c = GetParam();
  const std::string message = refusal(c.bytes);
  EXPECT_THAT(message, HasSubstr("safetensors: mem.safetensors: "));
  EXPECT_THAT(message, HasSubstr(c.expected));

  // The same bytes on disk are refused by read_safetensors with the same message, naming the path.
  TempDir dir;
  const fs::path path = dir.path / "bad.safetensors";
  write_bytes(path, c.bytes);
  try {
    read_safetensors(path.string());
    ADD_FAILURE() << "read_safetensors accepted " << c.name;
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("safetensors: " + path.string() + ": "));
    EXPECT_THAT(e.what(), HasSubstr(c.expected));
  }
}

INSTANTIATE_TEST_SUITE_P(Safetensors, SafetensorsRefuses, testing::ValuesIn(bad_files()),
                         [](const testing::TestParamInfo<BadFile>& info) { return std::string(info.param.name); });

TEST(Safetensors, LongNamesAreShortenedInMessages) {
  const std::string name(10000, 'n');
  const std::string message =
      refusal(make_file(R"({")" + name + R"(":{"dtype":"U16","shape":[],"data_offsets":[0,2]}})", {0, 0}));
  EXPECT_THAT(message, HasSubstr("unknown dtype 'U16'"));
  EXPECT_THAT(message, HasSubstr("(10000 bytes)"));
  EXPECT_LT(message.size(), 300u);
}

TEST(Safetensors, EveryTruncationIsRefused) {
  TempDir dir;
  const std::vector<std::byte> bytes = small_written_file(dir);
  ASSERT_NO_THROW(parse_safetensors(bytes, "full"));
  // The data section is exactly covered by tensors, so losing any suffix must be noticed.
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    const std::vector<std::byte> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_THROW(parse_safetensors(prefix, "truncated"), std::runtime_error) << "length " << len;
  }
}

TEST(Safetensors, HeaderByteFlipsNeverCrash) {
  TempDir dir;
  const std::vector<std::byte> bytes = small_written_file(dir);
  const std::uint64_t header_end = 8 + header_length(bytes);
  int refused = 0, accepted = 0;
  for (std::uint64_t i = 0; i < header_end; ++i) {
    for (const unsigned mask : {0x01u, 0x02u, 0x10u, 0x80u, 0xFFu}) {
      std::vector<std::byte> corrupt = bytes;
      corrupt[i] ^= static_cast<std::byte>(mask);
      // Either outcome is fine; anything but a clean std::runtime_error (a crash, a sanitizer report, another
      // exception type leaking out of the JSON library or a tensor factory) is not.
      try {
        const SafetensorsFile f = parse_safetensors(corrupt, "flipped");
        for (const auto& [name, t] : f.tensors) (void)t.to_double_vector();  // touch every accepted byte
        ++accepted;
      } catch (const std::runtime_error&) {
        ++refused;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << i << " ^ " << mask << ": unexpected exception type: " << e.what();
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0);  // e.g. a flipped letter inside a name or a metadata value is still a valid file
}

}  // namespace
}  // namespace cppgrad
