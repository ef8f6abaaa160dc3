// The safetensors reader against files made to hurt it: numbers that overflow, headers made to be slow, files far
// larger than their header admits, and data sections with gaps or trailing bytes. Each refusal is one
// std::runtime_error naming the file; nothing is allocated before the sizes are checked.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/safetensors.h"
#include "test_paths.h"
#include "test_util.h"

namespace cppgrad {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// A file of the 8-byte header length, the header, then `data`.
std::string write_file(const fs::path& path, const std::string& header, const std::string& data = "") {
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << data;
  return path.string();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(SafetensorsHostile, ANumberThatOverflowsIsARefusalNotACrash) {
  TempDir dir;
  const std::string path = write_file(dir.path / "f", R"({"x":{"dtype":"F32","shape":[1e999],"data_offsets":[0,0]}})");
  EXPECT_THROW_MSG(read_safetensors(path), std::runtime_error, "header is not valid JSON: number overflow parsing '1e999'");
}

// A header of n empty tensors, as a file in dir.
std::string many_tensors(const fs::path& dir, int n) {
  std::string header = "{";
  for (int i = 0; i < n; ++i)
    header.append(i ? ",\"t" : "\"t").append(std::to_string(i)).append(R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})");
  header += "}";
  return write_file(dir / std::string("n").append(std::to_string(n)), header);
}

// The fastest of two reads, in seconds of this process's CPU time (not wall time: other processes on a busy
// machine must not make a read look slow).
double read_seconds(const std::string& path, std::size_t expect_tensors) {
  double best = 1e9;
  for (int run = 0; run < 2; ++run) {
    const std::clock_t t0 = std::clock();
    EXPECT_EQ(read_safetensors(path).tensors.size(), expect_tensors);
    best = std::min(best, static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC);
  }
  return best;
}

TEST(SafetensorsHostile, HeaderParsingTimeGrowsLinearlyWithTheNumberOfTensors) {
  // nlohmann's parse-with-callback rescans the parent object at each object's end: 80,000 tensors took 61 s. A
  // ratio, not a time, so it holds in any build (Release, or Debug with sanitizers): four times the tensors take
  // about four times as long, where a quadratic parser takes sixteen.
  TempDir dir;
  const double small = read_seconds(many_tensors(dir.path, 10000), 10000);
  const double large = read_seconds(many_tensors(dir.path, 40000), 40000);
  EXPECT_LT(large / small, 10.0) << "10,000 tensors: " << small << " s, 40,000: " << large << " s";
}

TEST(SafetensorsHostile, AHugeSparseFileCostsOneSmallRead) {
  // 2 GiB of zeros: the header length reads as 0, which is refused before anything else is read or allocated.
  TempDir dir;
  const fs::path path = dir.path / "sparse";
  { std::ofstream(path).put('\0'); }
  fs::resize_file(path, std::uint64_t{2} << 30);
  const long rss_before = peak_rss_kb();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW_MSG(read_safetensors(path.string()), std::runtime_error, "header is not valid JSON");
  EXPECT_LT(seconds_since(t0), 1.0);
  EXPECT_LT(peak_rss_kb() - rss_before, 64 * 1024) << "KB: the file must not be read whole";
}

TEST(SafetensorsHostile, TheHeaderIsReadAloneAndEachTensorOnRequest) {
  // A 1 GiB tensor (a sparse file: no disk) after a small one: the header costs no data read.
  TempDir dir;
  const fs::path path = dir.path / "big.safetensors";
  const std::string header = R"({"small":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("big":{"dtype":"F32","shape":[268435456],"data_offsets":[8,1073741832]},)"
                             R"("__metadata__":{"format":"pt"}})";
  {
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t n = header.size();
    const float small[2] = {1.5f, -2.0f};
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << header;
    out.write(reinterpret_cast<const char*>(small), 8);
  }
  fs::resize_file(path, 8 + header.size() + 8 + (std::uint64_t{1} << 30));
  const long rss_before = peak_rss_kb();
  const auto t0 = std::chrono::steady_clock::now();
  const SafetensorsReader reader(path.string());
  ASSERT_EQ(reader.header().entries.size(), 2u);
  const SafetensorsEntry& big = reader.header().entries[1];  // the header's order
  EXPECT_EQ(big.name, "big");
  EXPECT_EQ(big.dtype, StoredDType::F32);
  EXPECT_EQ(big.shape, (Shape{268435456}));
  EXPECT_EQ(big.end - big.begin, std::uint64_t{1} << 30);
  EXPECT_EQ(reader.header().metadata.at("format"), "pt");
  EXPECT_EQ(reader.header().data_start, 8 + header.size());
  ASSERT_NE(reader.find("small"), nullptr);
  EXPECT_EQ(reader.find("absent"), nullptr);
  EXPECT_EQ(reader.read(*reader.find("small")).to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_LT(seconds_since(t0), 1.0);
  EXPECT_LT(peak_rss_kb() - rss_before, 64 * 1024) << "KB: the 1 GiB tensor must not be read";
}

TEST(SafetensorsHostile, ATensorLargerThanTheFileIsRefusedBeforeItIsAllocated) {
  TempDir dir;
  // 2^40 floats (4 TiB) claimed by a file of a few bytes.
  const std::string path = write_file(dir.path / "f",
                                      R"({"x":{"dtype":"F32","shape":[1099511627776],"data_offsets":[0,4398046511104]}})");
  EXPECT_THROW_MSG(read_safetensors(path), std::runtime_error, "run past the end of the data section");
  // A header length past the end of the file.
  std::ofstream(dir.path / "g", std::ios::binary).write("\xff\xff\xff\x00\x00\x00\x00\x00{}", 10);
  EXPECT_THROW_MSG(read_safetensors((dir.path / "g").string()), std::runtime_error, "runs past the end of the file");
  // One over the 100 MB cap, as the reference implementation caps headers.
  std::uint64_t over = 100'000'001;
  std::ofstream h(dir.path / "h", std::ios::binary);
  h.write(reinterpret_cast<const char*>(&over), 8);
  h.close();
  fs::resize_file(dir.path / "h", over + 8);
  EXPECT_THROW_MSG(read_safetensors((dir.path / "h").string()), std::runtime_error, "over the 100 MB limit");
}

TEST(SafetensorsHostile, TheDataSectionIsExactlyTheTensorsOneAfterAnother) {
  TempDir dir;
  const std::string eight(8, '\0');
  // A gap before the first tensor.
  EXPECT_THROW_MSG(read_safetensors(write_file(dir.path / "a", R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight)),
                   std::runtime_error, "the first tensor must start at 0");
  // A gap between two tensors.
  EXPECT_THROW_MSG(read_safetensors(write_file(dir.path / "b",
                                               R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                               R"("y":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                                               R"("z":{"dtype":"BOOL","shape":[2],"data_offsets":[6,8]}})", eight)),
                   std::runtime_error, "the data section has a gap");
  // Trailing bytes after the last tensor.
  EXPECT_THROW_MSG(read_safetensors(write_file(dir.path / "c", R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", eight)),
                   std::runtime_error, "trailing bytes after the last tensor");
  // Overlap.
  EXPECT_THROW_MSG(read_safetensors(write_file(dir.path / "d",
                                               R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                               R"("y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight)),
                   std::runtime_error, "overlap in the data section");
  // An empty tensor inside another tensor's bytes (the reference implementation refuses it too).
  EXPECT_THROW_MSG(read_safetensors(write_file(dir.path / "f",
                                               R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                               R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})", eight)),
                   std::runtime_error, "overlap in the data section");
  // Contiguous, in any order in the header, with an empty tensor between two others: fine.
  const SafetensorsFile ok = read_safetensors(write_file(dir.path / "e",
                                                         R"({"z":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                                                         R"("e":{"dtype":"I64","shape":[0,3],"data_offsets":[8,8]},)"
                                                         R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", eight));
  EXPECT_EQ(ok.tensors.size(), 3u);
}

TEST(SafetensorsHostile, InMemoryParsingRefusesTheSame) {
  // parse_safetensors (bytes already in memory, as the fuzzers feed it) shares every check with the file reader.
  std::vector<std::byte> bytes(8 + 2);
  const std::uint64_t n = 2;
  std::memcpy(bytes.data(), &n, 8);
  std::memcpy(bytes.data() + 8, "[]", 2);
  EXPECT_THROW_MSG(parse_safetensors(bytes, "mem"), std::runtime_error, "safetensors: mem: header must be a JSON object");
}

}  // namespace
}  // namespace cppgrad
