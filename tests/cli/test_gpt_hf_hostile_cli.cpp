// cppgrad-gpt import --hf against the hostile Hugging Face files of issue 40, each refused from the file's header
// alone: exit status 2, one line naming the file and what is wrong (no C++ exception's name), within the bound every
// reader keeps (run_program.h's expect_cheap: 200 MiB of peak resident memory and 2 s of CPU, the kernel's
// accounting of the program through wait4). Before the header-only reader: the 1 GiB extra tensor cost 1 GB and
// 3-11 s, the 1.55 million empty tensors 1.3 GB and 8-26 s (wall time on a loaded 2-core machine).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "parity/gpt2_hf_golden.h"
#include "run_program.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using cppgrad::test::MeasuredResult;

class GptHfHostile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = cppgrad::test::fresh_test_dir("cppgrad_gpt_hf_hostile"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // import of `hf` with the committed model's heads, measured.
  MeasuredResult import(const std::string& hf) const {
    return cppgrad::test::run_measured(CPPGRAD_GPT_BIN, {"import", "--hf", hf, "--out", path("out.ckpt"), "--heads", "2"},
                                       dir_);
  }
  fs::path dir_;
};

// Refused as a user should see it, within the bound.
void expect_refused_cheaply(const MeasuredResult& r, const std::string& message) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(message));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("std::")));
  EXPECT_THAT(r.err, Not(HasSubstr("bad_alloc")));
  cppgrad::test::expect_cheap(r, message);
  std::printf("%s: %.2f s of CPU, peak RSS %.1f MiB\n", message.substr(0, 60).c_str(), r.cpu_seconds, r.peak_mib);
}

// The committed GPT-2 file's header (parsed) and data section.
struct Parts {
  nlohmann::json header;
  std::string data;
};
Parts committed_file() {
  const std::string bytes = cppgrad::test::slurp(cppgrad::test::gpt2_hf_model_path());
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

// [length][header text][data], then `sparse_tail` bytes that take no disk (a hole).
void write_file(const std::string& path, const std::string& header, const std::string& data,
                std::uint64_t sparse_tail = 0) {
  {
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t n = header.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << header << data;
  }
  if (sparse_tail) fs::resize_file(path, fs::file_size(path) + sparse_tail);
}

TEST_F(GptHfHostile, AValidFilePlusA1GiBTensorIsRefusedWithoutReadingIt) {
  Parts f = committed_file();
  const std::uint64_t gib = std::uint64_t{1} << 30, end = f.data.size();
  f.header["transformer.extra"] = {{"dtype", "F32"}, {"shape", {gib / 4}}, {"data_offsets", {end, end + gib}}};
  write_file(path("extra.safetensors"), f.header.dump(), f.data, gib);
  expect_refused_cheaply(import(path("extra.safetensors")),
                               path("extra.safetensors") + ": unexpected tensor 'extra' float32 [268435456] (not a "
                                                           "GPT-2 weight nor a causal-mask buffer");
}

// The committed file's tensors, then 1.55 million empty ones: a 95 MB header. Built here, and freed before the
// import runs (ru_maxrss counts from the fork, when the child is a copy of this process).
void write_many_empty_tensors(const std::string& path) {
  const Parts f = committed_file();
  std::string header = f.header.dump();
  header.pop_back();  // the closing brace
  header.reserve(header.size() + 1'550'000 * 60);
  char entry[96];
  for (int i = 0; i < 1'550'000; ++i) {
    const int n = std::snprintf(entry, sizeof entry, R"(,"e%07d":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})", i);
    header.append(entry, static_cast<std::size_t>(n));
  }
  header += "}";
  ASSERT_GT(header.size(), 90'000'000u);
  write_file(path, header, f.data);
}

TEST_F(GptHfHostile, AHeaderOfMillionsOfEmptyTensorsIsRefusedAtTheBound) {
  write_many_empty_tensors(path("many.safetensors"));
  expect_refused_cheaply(import(path("many.safetensors")),
                               "safetensors: " + path("many.safetensors") + ": the header lists more than 100000 tensors");
}

// 89,998 more blocks of one empty tensor each, under the reader's bound: the importer would list a million layout
// tensors (280 MB before the bound on blocks).
TEST_F(GptHfHostile, AHeaderOfTooManyBlocksIsRefusedBeforeItsLayoutIsListed) {
  {
    const Parts f = committed_file();
    std::string header = f.header.dump();
    header.pop_back();
    for (int i = 2; i < 90'000; ++i)
      header += ",\"h." + std::to_string(i) + R"(.ln_1.weight":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
    write_file(path("blocks.safetensors"), header + "}", f.data);
  }
  expect_refused_cheaply(import(path("blocks.safetensors")),
                               path("blocks.safetensors") + ": the names hold 90000 transformer blocks (h.N), more "
                                                            "than the 1024 cppgrad imports");
}

// One string of 99 MB, as a tensor's name or as a metadata value (nlohmann's lexer buffers a string whole, doubling
// its buffer: 400 MB before the header-only reader, 200-700 MB with it before strings were bounded).
TEST_F(GptHfHostile, AHugeNameOrMetadataValueIsRefusedAtTheStringBound) {
  for (const bool name : {true, false}) {
    {
      Parts f = committed_file();
      const std::string huge(99'000'000, 'y');
      if (name) f.header[huge] = {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {0, 0}}};
      else f.header["__metadata__"]["note"] = huge;
      write_file(path("huge.safetensors"), f.header.dump(), f.data);
    }
    expect_refused_cheaply(import(path("huge.safetensors")),
                                 "safetensors: " + path("huge.safetensors") + ": the header has a string of more than "
                                                                              "16777216 bytes");
  }
}

TEST_F(GptHfHostile, ADirectoryIsNamedAsOne) {
  fs::create_directories(dir_ / "model");
  expect_refused_cheaply(import(path("model")), "--hf " + path("model") + ": is a directory, not a "
                                                                                  "model.safetensors file");
  std::ofstream(dir_ / "model" / "model.safetensors") << "";
  expect_refused_cheaply(import(path("model")), "--hf " + path("model") + ": is a directory; give the model "
                                                                                  "file in it: --hf " +
                                                          path("model/model.safetensors"));
}

// A GPT-2 layout whose wte has 4 million rows (1 GiB of holes) and a --tokenizer of 3 characters: refused from the
// header's vocabulary before a weight is read (it once read them all first: 500 MB for 2 million rows).
TEST_F(GptHfHostile, ATokenizerThatDoesNotFitTheHeadersVocabularyIsRefusedBeforeTheWeights) {
  Parts f = committed_file();
  const std::string wte = f.header.contains("transformer.wte.weight") ? "transformer.wte.weight" : "wte.weight";
  const std::int64_t rows = 4'000'000, width = f.header[wte]["shape"][1].get<std::int64_t>();
  const std::uint64_t old_bytes = f.header[wte]["data_offsets"][1].get<std::uint64_t>() -
                                  f.header[wte]["data_offsets"][0].get<std::uint64_t>(),
                      new_bytes = static_cast<std::uint64_t>(rows * width) * 4, grown = new_bytes - old_bytes;
  const std::uint64_t wte_begin = f.header[wte]["data_offsets"][0].get<std::uint64_t>();
  for (auto& [name, entry] : f.header.items()) {  // every tensor after wte's bytes moves down by what wte grew
    if (name == "__metadata__") continue;
    auto& offsets = entry["data_offsets"];
    if (name == wte) offsets[1] = wte_begin + new_bytes;
    else if (offsets[0].get<std::uint64_t>() > wte_begin)
      offsets = {offsets[0].get<std::uint64_t>() + grown, offsets[1].get<std::uint64_t>() + grown};
  }
  f.header[wte]["shape"] = {rows, width};
  const std::string header = f.header.dump(), file = path("wide_vocab.safetensors");
  {
    std::ofstream out(file, std::ios::binary);
    const std::uint64_t n = header.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << header << f.data.substr(0, wte_begin);
    out.seekp(static_cast<std::streamoff>(8 + n + wte_begin + new_bytes));  // wte's rows: a hole
    out << f.data.substr(wte_begin + old_bytes);
  }
  std::ofstream(path("abc.txt")) << "abc";
  expect_refused_cheaply(cppgrad::test::run_measured(CPPGRAD_GPT_BIN, {"import", "--hf", file, "--out", path("o.ckpt"),
                                                                       "--heads", "2", "--tokenizer", "char", "--data",
                                                                       path("abc.txt")}, dir_),
                         file + " has a vocabulary of 4000000, and --tokenizer char has 3 tokens");
}

}  // namespace
