#include "train/outputs.h"

#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>

#include "core/atomic_file.h"

namespace cppgrad::train {

namespace fs = std::filesystem;

bool is_stream_path(const std::string& path) {
  const PathKind kind = path_kind(path);
  return kind == PathKind::Fifo || kind == PathKind::CharDevice;
}

namespace {

void check_one(const OutputFlag& out) {
  if (out.path.empty()) throw std::invalid_argument(out.flag + " needs a path, got ''");
  if (out.stream && (is_descriptor_path(out.path) || is_stream_path(out.path))) return;
  try {
    check_atomic_target_by_trying(out.path);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(out.flag + " " + e.what());
  }
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ra = fs::weakly_canonical(fs::absolute(a), ea), rb = fs::weakly_canonical(fs::absolute(b), eb);
  return !ea && !eb && ra == rb;
}

void check_outputs(const std::vector<OutputFlag>& outputs, const std::string& resume,
                   const std::vector<InputFlag>& inputs) {
  for (const OutputFlag& out : outputs) check_one(out);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (same_file(outputs[i].path, outputs[j].path))
        throw std::invalid_argument(outputs[i].flag + " " + outputs[i].path + " and " + outputs[j].flag + " " +
                                    outputs[j].path + " name the same file: give each output its own path");
    if (!resume.empty() && outputs[i].flag != "--save" && same_file(outputs[i].path, resume))
      throw std::invalid_argument(outputs[i].flag + " " + outputs[i].path + " names the checkpoint being resumed (" +
                                  resume + "): it would be overwritten");
    for (const InputFlag& in : inputs)
      if (!in.path.empty() && same_file(outputs[i].path, in.path))
        throw std::invalid_argument(outputs[i].flag + " " + outputs[i].path + " names " +
                                    (in.flag.starts_with("--") ? "the file " + in.flag + " reads" : in.flag) + " (" +
                                    in.path + "): it would be overwritten; give the output its own path");
  }
}

}  // namespace cppgrad::train
