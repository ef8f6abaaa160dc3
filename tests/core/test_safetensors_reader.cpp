// SafetensorsReader's header parse: the bound on a header's entries, each entry judged in one order of checks
// whatever order its fields come in, other fields ignored but not repeated, and F16 / BF16 tensors read as float32.
// (The header read alone, without the data: SafetensorsHostile.TheHeaderIsReadAloneAndEachTensorOnRequest.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "safetensors_bytes.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using test::safetensors_bytes;

std::string empty_tensors(std::size_t n) {
  std::string header = "{";
  for (std::size_t i = 0; i < n; ++i)
    header.append(i ? ",\"t" : "\"t").append(std::to_string(i)).append(R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})");
  return header + "}";
}

TEST(SafetensorsReader, AHeaderOfMoreEntriesThanTheBoundIsRefusedAsItPassesIt) {
  ASSERT_EQ(parse_safetensors(safetensors_bytes(empty_tensors(kMaxSafetensorsEntries)), "mem").tensors.size(),
            kMaxSafetensorsEntries);
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(empty_tensors(kMaxSafetensorsEntries + 1)), "many"), std::runtime_error,
                   "safetensors: many: the header lists more than 100000 tensors, the most cppgrad reads");
  // The metadata likewise.
  std::string metadata = R"({"__metadata__":{)";
  for (std::size_t i = 0; i <= kMaxSafetensorsEntries; ++i) metadata.append(i ? ",\"k" : "\"k").append(std::to_string(i)).append("\":\"\"");
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(metadata + "}}"), "meta"), std::runtime_error,
                   "the header has more than 100000 metadata keys");
}

TEST(SafetensorsReader, AStringLongerThanTheBoundIsRefusedBeforeItIsBuffered) {
  const std::size_t bound = std::size_t{16} << 20;
  const std::string open = R"({"__metadata__":{"k":")";  // the value's quote at header offset 21
  EXPECT_EQ(parse_safetensors(safetensors_bytes(open + std::string(bound, 'v') + "\"}}"), "m").metadata.at("k").size(),
            bound);
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(open + std::string(bound + 1, 'v') + "\"}}"), "m"),
                   std::runtime_error,
                   "safetensors: m: the header has a string of more than 16777216 bytes (from header offset 21)");
  // A name likewise; an escaped quote does not end the string.
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"a\")" + std::string(bound, 'n') + R"(":{}})"), "m"),
                   std::runtime_error, "more than 16777216 bytes (from header offset 1)");
}

TEST(SafetensorsReader, EntriesAreJudgedInOneOrderWhateverTheOrderOfTheirFields) {
  // The dtype is judged before the shape, though it comes last.
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"x":{"data_offsets":[0,4],"shape":"two","dtype":"Q8"}})"), "m"),
                   std::runtime_error, "unknown dtype 'Q8' for tensor 'x'");
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"x":{"data_offsets":[0,4],"shape":"two"}})"), "m"),
                   std::runtime_error, "tensor 'x': entry has no \"dtype\"");
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"x":{"data_offsets":[0,4],"shape":[[1]],"dtype":"F32"}})"), "m"),
                   std::runtime_error, "\"shape\" must be a list of integers, found a array");
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"x":{"data_offsets":{"a":0},"shape":[1],"dtype":"F32"}})"), "m"),
                   std::runtime_error, "\"data_offsets\" must be a list [begin, end]");
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"x":{"dtype":["F32"],"shape":[1],"data_offsets":[0,4]}})"), "m"),
                   std::runtime_error, "\"dtype\" must be a string, got array");
}

TEST(SafetensorsReader, OtherFieldsAreIgnoredButNotRepeated) {
  const std::vector<std::uint8_t> four(4, 0);
  const SafetensorsFile f = parse_safetensors(
      safetensors_bytes(R"({"x":{"note":{"a":[1,{"b":null}]},"dtype":"F32","shape":[],"data_offsets":[0,4],"n":true}})", four),
      "m");
  EXPECT_EQ(f.tensors.at("x").item<float>(), 0.0f);
  EXPECT_THROW_MSG(
      parse_safetensors(safetensors_bytes(R"({"x":{"n":1,"dtype":"F32","shape":[],"data_offsets":[0,4],"n":2}})", four), "m"),
      std::runtime_error, "duplicate key 'n' in the header JSON");
  EXPECT_THROW_MSG(
      parse_safetensors(safetensors_bytes(R"({"x":{"shape":[],"dtype":"F32","shape":[],"data_offsets":[0,4]}})", four), "m"),
      std::runtime_error, "duplicate key 'shape'");
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"__metadata__":{"a":"1","a":"2"}})"), "m"), std::runtime_error,
                   "duplicate key 'a'");
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"__metadata__":{},"__metadata__":{}})"), "m"), std::runtime_error,
                   "duplicate key '__metadata__'");
  std::string wide = R"({"x":{"dtype":"F32","shape":[],"data_offsets":[0,4],"more":{)";
  for (int i = 0; i < 1100; ++i) wide.append(i ? ",\"k" : "\"k").append(std::to_string(i)).append("\":0");
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(wide + "}}}", four), "m"), std::runtime_error,
                   "more than 1024 keys in one object");
}

TEST(SafetensorsReader, HalfPrecisionTensorsAreReadAsFloat32) {
  // F16: 1, the smallest subnormal, -inf, 65504; BF16: 1, -2, float32's smallest subnormal, 2^-126.
  const SafetensorsFile f = parse_safetensors(
      safetensors_bytes(R"({"h":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},)"
                R"("b":{"dtype":"BF16","shape":[4],"data_offsets":[8,16]}})",
                {0x00, 0x3C, 0x01, 0x00, 0x00, 0xFC, 0xFF, 0x7B, 0x80, 0x3F, 0x00, 0xC0, 0x01, 0x00, 0x80, 0x00}),
      "mem");
  const Tensor& h = f.tensors.at("h");
  EXPECT_EQ(h.dtype(), DType::Float32);
  EXPECT_EQ(h.shape(), (Shape{2, 2}));
  EXPECT_EQ(h.to_vector<float>(),
            (std::vector<float>{1.0f, std::ldexp(1.0f, -24), -std::numeric_limits<float>::infinity(), 65504.0f}));
  EXPECT_EQ(f.tensors.at("b").to_vector<float>(),
            (std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -133), std::ldexp(1.0f, -126)}));
  // Two bytes an element in the size check.
  EXPECT_THROW_MSG(parse_safetensors(safetensors_bytes(R"({"h":{"dtype":"F16","shape":[3],"data_offsets":[0,8]}})",
                                               std::vector<std::uint8_t>(8, 0)),
                                     "mem"),
                   std::runtime_error, "tensor 'h': F16 [3] needs 6 bytes but data_offsets [0, 8] hold 8");
  EXPECT_STREQ(stored_name(StoredDType::BF16), "bfloat16");
  EXPECT_EQ(loaded_dtype(StoredDType::F16), DType::Float32);
}

TEST(SafetensorsReader, AMoreThanChunkSizedHalfTensorIsWidenedWhole) {
  // 3 x 2^16 + 5 elements: the reader widens 2^16 at a time, so chunk edges and a short last chunk are crossed.
  const std::size_t n = 3 * 65536 + 5;
  std::vector<std::uint8_t> data(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t bits = static_cast<std::uint16_t>(0x3C00 + i % 1024);  // 1 + (i % 1024) / 1024
    data[2 * i] = bits & 0xFF, data[2 * i + 1] = bits >> 8;
  }
  const SafetensorsFile f = parse_safetensors(
      safetensors_bytes(R"({"h":{"dtype":"F16","shape":[)" + std::to_string(n) + R"(],"data_offsets":[0,)" +
                    std::to_string(2 * n) + "]}}",
                data),
      "mem");
  const std::vector<float> v = f.tensors.at("h").to_vector<float>();
  ASSERT_EQ(v.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], 1.0f + static_cast<float>(i % 1024) / 1024) << i;
}

}  // namespace
}  // namespace cppgrad
