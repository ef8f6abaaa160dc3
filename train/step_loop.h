#pragma once
// The training loop's bookkeeping, the one every trainer runs (cppgrad-gpt's steps, the page's chunks of them,
// cppgrad-reverse's steps of an epoch, docs/add-a-program.md's program): it says when. Before a step, whether to take
// it: not at the run's last step (nor past the end of a chunk a caller trains), and not once the caller's stop check
// says stop. After it, the diverged-run guard (train/diverged.h) and whether an evaluation is due: every `eval_every`
// steps and at the last. The step, the evaluation and what a program shows are the caller's: a progress bar drawn in
// its step's code, Ctrl-C and SIGTERM through `stop` (train/stop.h), so the same loop runs where there is no terminal
// and no signal (the browser page).
//
//   train::catch_stop_signals();                                       // Ctrl-C: stop at the next step boundary
//   train::StepLoop loop({.steps = c.steps, .eval_every = c.eval_every, .stop = train::stop_requested});
//   while (loop.next(run.step)) {
//     const double loss = train_step(run);                            // counts run.step
//     if (!loop.stepped(run.step, loss)) continue;
//     ... evaluate, print, write the metrics, the plot, the checkpoint
//   }
//   if (loop.stopped()) save, and return train::stopped_by_signal(...)
#include <cstdint>
#include <functional>
#include <limits>

namespace cppgrad::train {

struct StepLoopOptions {
  std::int64_t steps = 0;                // the run's steps (an epoch's, for a run that counts epochs)
  std::int64_t eval_every = 1;           // an evaluation after every eval_every-th step, and after the last
  // A caller that trains in chunks (the page) stops here and calls again; the run still ends, and evaluates, at steps.
  std::int64_t until = std::numeric_limits<std::int64_t>::max();
  std::int64_t epoch = 0;                // the steps' epoch, for the diverged guard's message (0: a run of steps)
  std::function<bool()> stop = nullptr;  // asked before every step (none: never); true stops the loop there
};

class StepLoop {
 public:
  explicit StepLoop(StepLoopOptions options) : o_(std::move(options)) {}
  // Before a step, with `step` steps done: whether to take it (false at min(until, steps), or when stop() says so).
  bool next(std::int64_t step);
  // After a step, now `step` steps done, of loss `loss`: throws TrainingDiverged when the loss is NaN or Inf, and
  // returns whether an evaluation is due.
  bool stepped(std::int64_t step, double loss) const;
  // Whether the loop ended because stop() said so (the caller saves, and throws train::TrainingStopped or exits).
  bool stopped() const { return stopped_; }

 private:
  StepLoopOptions o_;
  bool stopped_ = false;
};

}  // namespace cppgrad::train
