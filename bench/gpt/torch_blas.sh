#!/usr/bin/env bash
# Which BLAS /usr/bin/python3's torch multiplies with, for the scripts that time PyTorch (compare.sh, gpt2_124m.sh).
# Debian's python3-torch calls whichever libblas.so.3 is installed: netlib's reference BLAS, the default, made
# PyTorch's GPT-2 124M step 30x slower than on OpenBLAS (66 s against 2.1 s, Sapphire Rapids, 2026-12-06).
#
#   bash bench/gpt/torch_blas.sh    prints the library's resolved path; exits 1 when it is the reference BLAS, with
#                                   the fix on stderr
#   bash bench/gpt/torch_blas.sh --coretype
#                                   prints the OPENBLAS_CORETYPE a script exports before timing PyTorch, or nothing
#   bash bench/gpt/torch_blas.sh --coretype-for CORE FLAGS
#                                   the same rule for OpenBLAS's choice CORE on a CPU with FLAGS (for the test)
#   source bench/gpt/torch_blas.sh; use_openblas_kernels
#                                   what a script that times PyTorch runs first: exports that OPENBLAS_CORETYPE and
#                                   sets $openblas_kernels to the kernels PyTorch will run on, to print
#
# OpenBLAS picks its kernels by the CPU's model, and a model newer than the library gets its SSE3 kernels
# ("Prescott"): Debian 12's OpenBLAS 0.3.21 on an Intel Xeon of family 6, model 207 (Emerald Rapids) made PyTorch's
# float32 products 4x slower (28 against 126 GFLOP/s a thread, [128, 768] @ [768, 2304]) and its GPT-2 124M LoRA
# step 3x (2.9 s against 0.95 s, 2026-12-07). PyTorch's best setting then names the kernels the CPU's flags allow.
# The core type for OpenBLAS's choice CORE on a CPU with FLAGS (/proc/cpuinfo's line): the best the flags allow when
# the library fell back to Prescott, else nothing (its own choice stands).
coretype_for() {
  if [[ $1 == Prescott ]]; then
    if [[ " $2 " == *" avx512_bf16 "* ]]; then echo Cooperlake
    elif [[ " $2 " == *" avx512f "* ]]; then echo SkylakeX
    elif [[ " $2 " == *" avx2 "* ]]; then echo Haswell
    fi
  fi
}
# The core type for this machine's PyTorch (empty: OpenBLAS's own choice stands, or torch is missing).
coretype_here() {
  local core
  core=$(/usr/bin/python3 -c 'import ctypes, torch
path = next((line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line), None)
if path:
    lib = ctypes.CDLL(path)
    lib.openblas_get_corename.restype = ctypes.c_char_p
    print(lib.openblas_get_corename().decode())' 2>/dev/null) || return 0
  coretype_for "$core" "$(grep -m1 '^flags' /proc/cpuinfo)"
}
# PyTorch's best setting, for the scripts that time it: OpenBLAS's kernels for this CPU when the library does not know
# it. Exports OPENBLAS_CORETYPE (unless set already) and sets openblas_kernels to the kernels PyTorch runs on.
use_openblas_kernels() {
  local coretype
  [[ -n ${OPENBLAS_CORETYPE:-} ]] || coretype=$(coretype_here)
  if [[ -n ${coretype:-} ]]; then export OPENBLAS_CORETYPE=$coretype; fi
  # shellcheck disable=SC2034  # read by the scripts that source this file
  openblas_kernels=${OPENBLAS_CORETYPE:-its own choice}
}
[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0  # sourced: the functions alone
set -euo pipefail
if [[ ${1:-} == --coretype-for ]]; then  # CORE FLAGS: the rule alone (tests/CMakeLists.txt holds it)
  coretype_for "$2" "$3"
  exit 0
fi
if [[ ${1:-} == --coretype ]]; then
  coretype_here
  exit 0
fi
blas=$(/usr/bin/python3 -c 'import torch
print(next((line.split()[-1] for line in open("/proc/self/maps") if "libblas" in line or "openblas" in line), "?"))')
blas=$(readlink -f "$blas" 2>/dev/null || echo "$blas")
echo "$blas"
if [[ $blas == */blas/libblas.so* ]]; then
  echo "PyTorch runs on netlib's reference BLAS ($blas), not OpenBLAS: not PyTorch's speed (Debian: apt-get install" \
       "libopenblas0-pthread, which takes over the libblas.so.3 alternative)" >&2
  exit 1
fi
