#pragma once
// cppgrad's training layer in one include, beside <cppgrad/cppgrad.h>: what a training program needs beyond its
// model. Plain functions and small types, called in order from a main that reads top to bottom:
//
//   #include <cppgrad/cppgrad.h>
//   #include <cppgrad/train.h>
//   main: return train::run_program("my-program", argc, argv, usage, {{"train", cmd_train}}, hint);
//   cmd_train: cxxopts::Options o(...); train::add_config_flags(o, table); train::add_output_flags(o, {...});
//              auto r = train::parse_flags(o, argc, argv); train::open_train_outputs(r, true, outputs);
//   train::check_outputs({{"--save", path}});   before any work: no flag destroys a user's file
//   train::catch_stop_signals();                from here Ctrl-C / SIGTERM ask to stop at a step boundary
//   train::StepLoop loop({.steps = steps, .eval_every = every, .stop = train::stop_requested});
//   while (loop.next(step)) { ... the step; if (loop.stepped(step, loss)) evaluate, write }   (train/step_loop.h)
//   if (loop.stopped()) save and return train::stop_status();
//   ... each epoch: metrics.write(lines); train::save_checkpoint(path, format, model, optimizer, meta);
//   write_file_atomically("loss.svg", train::loss_curves_svg(curves, "loss"));
//
// Link cppgrad::train (CMake) or pkg-config cppgrad, which carries both libraries (and cxxopts's include path).
#include "core/atomic_file.h"  // write_file_atomically: checkpoints and plots are written whole
#include "cppgrad/cppgrad.h"

// a program's command line (run_program, strict flags, usage errors; the config table's and the outputs' flags), its
// config table (flags, bounds, JSON), checkpoints and resume (a step-based run's in one call), the metrics history,
// the metrics stream, output paths, the diverged-run guard, stopping on a signal, the step loop every trainer runs,
// flag values, the data-parallel step (its tree and its shards' numbers), the GPT's step and the reversal model's
#include "train/checkpoint.h"
#include "train/cli.h"
#include "train/cli_flags.h"
#include "train/cli_outputs.h"
#include "train/data_parallel.h"
#include "train/diverged.h"
#include "train/flags.h"
#include "train/gpt_step.h"
#include "train/gradient_tree.h"
#include "train/history.h"
#include "train/lines_output.h"
#include "train/outputs.h"
#include "train/reversal_step.h"
#include "train/run_config.h"
#include "train/run_file.h"
#include "train/shard_sums.h"
#include "train/step_loop.h"
#include "train/stop.h"
#include "train/tree.h"

// plots: SVG charts and attention maps, and the terminal's progress bar, heatmap and sparkline
#include "train/plot/attention_maps.h"
#include "train/plot/charts.h"
#include "train/plot/progress_bar.h"
#include "train/plot/svg.h"
#include "train/plot/terminal.h"
