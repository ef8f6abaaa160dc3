// Two holes the first hostile-input pass left in the safetensors header parser: a raw NUL byte (nlohmann's lexer
// stops there as if the input ended, so "{}\0anything" was read as "{}"), and lists far longer than any shape
// (each value becomes a 16-byte JSON node before the reader looks at it: 100 MB of "0," would cost 800 MB).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "safetensors_bytes.h"
#include "test_util.h"

namespace cppgrad {
namespace {

TEST(SafetensorsHeaderLimits, ARawNulByteIsRefused) {
  std::string header = R"({"x":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})";
  header += '\0';
  header += "this was ignored";
  EXPECT_THROW_MSG(parse_safetensors(test::safetensors_bytes(header, 1), "nul.safetensors"), std::runtime_error,
                   "safetensors: nul.safetensors: header is not valid JSON: a NUL byte at header offset 55");
}

TEST(SafetensorsHeaderLimits, AnEscapedNulInANameIsFine) {
  const SafetensorsFile f =
      parse_safetensors(test::safetensors_bytes(R"({"a\u0000b":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})", 1), "mem");
  EXPECT_EQ(f.tensors.count(std::string("a\0b", 3)), 1u);
}

TEST(SafetensorsHeaderLimits, AListLongerThanAnyShapeIsRefusedWhileParsing) {
  std::string zeros = "[0";
  for (int i = 0; i < 5000; ++i) zeros += ",0";
  zeros += "]";
  for (const std::string& header :
       {R"({"x":{"dtype":"BOOL","shape":)" + zeros + R"(,"data_offsets":[0,0]}})", R"({"__metadata__":)" + zeros + "}",
        R"({"x":)" + zeros + "}"}) {
    EXPECT_THROW_MSG(parse_safetensors(test::safetensors_bytes(header), "long.safetensors"), std::runtime_error,
                     "header JSON has a list of more than 1024 values");
  }
}

TEST(SafetensorsHeaderLimits, ShapesUpToTheRankLimitStillParse) {
  std::string ones = "[1";
  for (int i = 1; i < 64; ++i) ones += ",1";
  ones += "]";
  const SafetensorsFile f =
      parse_safetensors(test::safetensors_bytes(R"({"x":{"dtype":"BOOL","shape":)" + ones + R"(,"data_offsets":[0,1]}})", 1), "mem");
  EXPECT_EQ(f.tensors.at("x").dim(), 64);
}

}  // namespace
}  // namespace cppgrad
