#!/usr/bin/python3
"""PyTorch's side of cppgrad-bench's step benchmarks at other model sizes.

One training step (forward, backward, Adam; batch 64) of the PyTorch anchor's reversal model
(honest_reversal.py, imported from $CPPGRAD_ANCHORS/pytorch, not copied), at the sizes
cppgrad-bench measures in BM_TrainStepScaling and BM_TrainStepLarge:
  d_model 32, 128, 512 at sequence length 8; length 8, 64, 256 at d_model 32 (4 heads, d_ff = 2 d_model);
  the large configuration: d_model 256, 8 heads, d_ff 1024, length 64.
Prints the median step time per configuration and thread count.

Run:  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/pytorch/step_scaling.py --threads 1 2 [--anchors DIR]
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
# The PyTorch anchors: $CPPGRAD_ANCHORS/pytorch, or, when it is unset, where CI keeps the anchors (beside the clone).
DEFAULT_ANCHORS = (os.path.join(os.environ["CPPGRAD_ANCHORS"], "pytorch") if os.environ.get("CPPGRAD_ANCHORS")
                   else os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "anchors", "pytorch")))

CONFIGS = [  # (name, d_model, heads, d_ff, length)
    ("d_model 32, len 8", 32, 4, 64, 8),
    ("d_model 128, len 8", 128, 4, 256, 8),
    ("d_model 512, len 8", 512, 4, 1024, 8),
    ("d_model 32, len 64", 32, 4, 64, 64),
    ("d_model 32, len 256", 32, 4, 64, 256),
    ("large: d_model 256, 8 heads, len 64", 256, 8, 1024, 64),
]


def step_ms(hr, d_model, heads, d_ff, length, threads, min_steps, min_seconds):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    src = torch.randint(1, hr.VOCAB, (64, length))
    tgt = src.flip(1)
    dec_in = hr.shift_right(tgt)
    model = hr.Seq2SeqTransformer(d_model=d_model, n_heads=heads, d_ff=d_ff, max_len=max(50, length + 1))
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    crit = nn.CrossEntropyLoss()
    times = []
    start = time.perf_counter()
    for it in range(10**9):
        t0 = time.perf_counter()
        logits = model(src, dec_in)
        loss = crit(logits.reshape(-1, hr.VOCAB), tgt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        t1 = time.perf_counter()
        if it >= 2:  # warm-up
            times.append(t1 - t0)
        if len(times) >= min_steps and time.perf_counter() - start >= min_seconds:
            break
    return statistics.median(times) * 1e3, len(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--anchors", default=DEFAULT_ANCHORS, help="directory holding honest_reversal.py")
    ap.add_argument("--min-steps", type=int, default=3)
    ap.add_argument("--min-seconds", type=float, default=2.0)
    ap.add_argument("--only", default="", help="run only configurations whose name contains this")
    args = ap.parse_args()
    sys.path.insert(0, args.anchors)
    import honest_reversal as hr

    print(f"torch {torch.__version__}")
    for name, d_model, heads, d_ff, length in CONFIGS:
        if args.only and args.only not in name:
            continue
        for threads in args.threads:
            ms, n = step_ms(hr, d_model, heads, d_ff, length, threads, args.min_steps, args.min_seconds)
            print(f"{name:38s} threads={threads}  step median {ms:9.2f} ms  ({n} steps)", flush=True)


if __name__ == "__main__":
    main()
