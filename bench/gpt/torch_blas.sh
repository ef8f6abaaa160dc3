#!/usr/bin/env bash
# Which BLAS /usr/bin/python3's torch multiplies with, for the scripts that time PyTorch (compare.sh, gpt2_124m.sh).
# Debian's python3-torch calls whichever libblas.so.3 is installed: netlib's reference BLAS, the default, made
# PyTorch's GPT-2 124M step 30x slower than on OpenBLAS (66 s against 2.1 s, Sapphire Rapids, 2026-12-06).
#
#   bash bench/gpt/torch_blas.sh    prints the library's resolved path; exits 1 when it is the reference BLAS, with
#                                   the fix on stderr
set -euo pipefail
blas=$(/usr/bin/python3 -c 'import torch
print(next((line.split()[-1] for line in open("/proc/self/maps") if "libblas" in line or "openblas" in line), "?"))')
blas=$(readlink -f "$blas" 2>/dev/null || echo "$blas")
echo "$blas"
if [[ $blas == */blas/libblas.so* ]]; then
  echo "PyTorch runs on netlib's reference BLAS ($blas), not OpenBLAS: not PyTorch's speed (Debian: apt-get install" \
       "libopenblas0-pthread, which takes over the libblas.so.3 alternative)" >&2
  exit 1
fi
