#pragma once
// The files a training run writes, checked before it starts, so that no flag can destroy what a user owns:
//   - files written whole (checkpoints, plots, graphs) go through write_file_atomically, which replaces only a
//     regular file;
//   - streams (metrics, gradient log: lines_output.h) may also go straight into a FIFO or a terminal
//     (/dev/stdout), where each new line is written once, in order;
//   - two outputs never name one file (after resolving symlinks and hard links), no output names a file the
//     command reads (its data), and none names the checkpoint being resumed, except --save itself.
#include <string>
#include <vector>

namespace cppgrad::train {

// A flag and the path it names, e.g. {"--save", "run.safetensors"}.
struct OutputFlag {
  std::string flag;
  std::string path;
  bool stream = false;  // metrics and gradient log: a FIFO or a character device is allowed too
};

// A file the command reads, which no output may name: {"--data", "words.txt"} ("names the file --data reads"), or a
// file no flag names, described: {"the config.json beside --hf", "hf/config.json"}. An empty path is no input.
struct InputFlag {
  std::string flag;
  std::string path;
};

// Throws std::invalid_argument "<flag> <path>: <why>" (a usage error) for an empty path, a target that cannot be
// written (a directory, a FIFO for a file written whole, a missing directory, a file name or path too long, a
// directory where no file can be created: a temporary file is created there and removed, as root passes every
// permission check on /proc), two flags naming one file, or an output naming one of `inputs` (the user's data, a
// model read in, through any symlink or hard link); `resume` (may be empty) is the checkpoint read at the start,
// which only --save may name.
void check_outputs(const std::vector<OutputFlag>& outputs, const std::string& resume = "",
                   const std::vector<InputFlag>& inputs = {});

// A FIFO or a character device (a terminal, /dev/null): written line by line, never replaced.
bool is_stream_path(const std::string& path);

// True when a and b name the same file: the same inode if both exist, else the same resolved path.
bool same_file(const std::string& a, const std::string& b);

}  // namespace cppgrad::train
