#!/usr/bin/env bash
# One device call (docs/gpu-validation.md): build, `kbench specs`, which sandbox settings let CUDA
# start, `kbench eval --profile` on the ReLU (GPU test CudaCounters and a `sol` run whose ncu
# reports are kept), the GPU-only exploits, the timing GPU tests. Everything lands in
# $OUT/gpu-validate-counters.tgz.
# Usage (device tool): bash scripts/gpu-validate-counters.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export KBENCH_BUILD=build-gpu
R=$(mktemp -d "${TMPDIR:-/tmp}/kbench-gpu-validate.XXXXXX")
T0=$(date +%s)
at() { echo "[$(($(date +%s) - T0)) s] $*"; }
# SQLite's headers, carried (scripts/gpu-deps.sh): the machine cannot install packages.
[ -d .device-carry/deps ] && export KBENCH_DEPS_DIR=$PWD/.device-carry/deps
scripts/setup.sh > "$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
at build
K=$PWD/build-gpu/kbench
"$K" specs > "$R/specs.txt" 2>&1
python3 -c "import torch; p=torch.cuda.get_device_properties(0); print('torch L2', p.L2_cache_size, p.name)" >> "$R/specs.txt" 2>&1
head -3 "$R/specs.txt"; tail -1 "$R/specs.txt"
S=
for s in on off:network off:syscall_filter off:filesystem off; do
  KBENCH_SANDBOX=$s timeout 60 "$K" problems check problems/level1/1_relu.py --device cuda \
    --variant standard --trials 1 > "$R/sb-$s.txt" 2>&1
  rc=$?
  at "sandbox $s rc=$rc $(grep -o -m1 'sees no CUDA[^)]*)' "$R/sb-$s.txt" | head -c 300)"
  [ -z "$S" ] && [ $rc = 0 ] && S=$s
done
at "using KBENCH_SANDBOX=$S"
export KBENCH_SANDBOX=$S KBENCH_GPU_REPORT_DIR=$R
(cd build-gpu && timeout 200 ctest -R CudaCounters --output-on-failure > "$R/ctest-counters.log" 2>&1)
at "counters test rc=$?"
grep -E "Failure|Passed|Failed" "$R/ctest-counters.log" | head
tail -22 "$R/counters-relu.txt"
timeout 100 "$K" eval problems/level1/1_relu.py examples/cuda/level1_relu.py --device cuda \
  --trials 2 --no-compile-baseline --profile sol --keep-scratch --json "$R/relu-sol.json" > "$R/relu-sol.txt" 2>&1
at "relu sol rc=$?"
grep -E "^counters|^SOL|^phys|^wall" "$R/relu-sol.txt"
for d in "${TMPDIR:-/tmp}"/kbench-eval-*/profile.*; do cp "$d/ncu.csv" "$R/$(basename "$d").ncu.csv"; done
E=examples/exploits
for x in 26_side_stream 27_decoy_kernel; do
  timeout 130 "$K" eval $E/problem_relu.py $E/$x.py --device cuda --rules structural \
    --json "$R/$x.json" > "$R/$x.txt" 2>&1
  at "$x rc=$? $(grep -m1 '^status' "$R/$x.txt") $(grep -m1 '^message' "$R/$x.txt" | head -c 250)"
done
(cd build-gpu && timeout 150 ctest -R "CudaTiming.Relu|CudaProblemsCheck" --output-on-failure > "$R/ctest-timing.log" 2>&1)
at "timing tests rc=$?"
grep -E "Passed|Failed" "$R/ctest-timing.log"
tar czf "${OUT:-.}/gpu-validate-counters.tgz" -C "$(dirname "$R")" "$(basename "$R")"
at done
