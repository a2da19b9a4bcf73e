#!/usr/bin/env bash
# Device calls for the measurement engine (docs/gpu-validation.md, docs/timing-fidelity.md):
# builds kbench (incrementally on a machine still warm from the call before), then runs the
# steps named on the command line, each under its own time limit. Everything lands in
# $OUT/gpu-validate-measure.tgz, even when a step fails or the call runs out of time.
#
# Steps:
#   unit           the unit tests (CTest label unit), on the GPU machine's toolchain
#   problems-check GPU test CudaProblemsCheck (kbench problems check with device timing)
#   fidelity       bench/timing_fidelity (kbench vs ncu, CUDA events, do_bench)
#   repeat-tiny    five whole `kbench eval` runs of the seed's tiny masked broadcast
#   power-bound    bench/power_bound (an fp16 matmul at the power cap; throttle rule and recovery)
#   timing-tests   GPU tests CudaTiming.Relu and CudaCounters (full sandbox: torch.compile, ncu)
#                  and the Python GPU tests
#   counters       GPU test CudaCounters alone (ncu under the full sandbox)
#   timing-core    GPU tests CudaTiming (ReLU traced in paired blocks, side stream and cached
#                  results) and the Python GPU tests, without the counters
#   pytest-gpu     the Python GPU tests alone (CUPTI tracing through kbench_native)
#   side-stream    GPU test CudaTiming.SideStreamAndCachedResultsAreCaught
#   disassemble    `kbench disassemble` with the toolkit's cuobjdump
#   exploits-build[:REGEX] every CUDA candidate of the exploit corpus (with the twins and KernelBench's
#                  mnist2) built into the compile cache in parallel (`kbench suite --build-only`),
#                  so the exploit steps that follow spend their time evaluating; with REGEX, also
#                  the CUDA examples whose candidate matches it (for a later honest-flags step)
#   exploits:REGEX GPU test CudaExploits on the entries whose candidate matches REGEX
#   exploits       GPU tests CudaExploits (the exploit corpus's CUDA entries, the own-kernel-share
#                  rule on the library-reuse ones) and CudaRules (KernelBench's partial-replacement
#                  example passes the default rules); about 3-4 minutes, two extensions to build
#   examples       GPU test CudaExamples: every bundled example on the GPU. About 40 s per CUDA
#                  example (the suite builds the extensions in parallel first; each evaluation
#                  then spends 10-17 s building the torch.compile baseline and up to 15 s
#                  sampling), so the whole suite does not fit in one call: use examples:REGEX
#   examples:REGEX the same test on the CUDA examples whose candidate path matches REGEX
#   native         `kbench eval` of the level1 ReLU in the torch-free kernel format
#                  (examples/native/level1_relu.cu): its cold and cached build, status, timing
#   transfer       bench/transfer: a tensor on the GPU written to a tensor file through the stage
#                  (tensor_io.py) against a private CPU copy first, 16 MiB to 4 GiB; then on the CPU
#   warm-pair      `kbench eval` of the exploit corpus' ReLU problem with examples/cuda/level1_relu.py:
#                  cold, warm (no torch.compile baseline), warm with it: wall, measure phase, samples
#   big-check[:P]  `kbench problems check --trials 3` (KBENCH_BIG_CHECK_TRIALS) of a large KernelBench problem (P, default
#                  level1/5_Matrix_scalar_multiplication.py, from build/compat-suites.tar.gz) with the
#                  committed tensor_io.py and with the one carried as build/tensor_io_before.py
#   cold-build     bench/cold_build: examples/cuda/level1_relu.py's load_inline built cold as torch
#                  builds it, with the CUDA unit against torch/types.h and nvcc's front ends side by
#                  side and the host compile's header and the binding unit against torch/types.h
#                  and torch/python.h, then that with kbench's ATen/Functions.h (kbench's
#                  default; other modes through KBENCH_COLD_MODES; ninja's log per unit), then two
#                  cold `kbench eval --no-timing`s in a fresh cache, the second of a renamed copy
#                  that finds the host header the first asked for (compile.seconds, cuda_header,
#                  binding_header)
#   warm-eval      bench/warm_eval (a warm --no-timing eval, fork server on and off, against a
#                  bare Python that imports torch and runs the reference once)
#   warm-eval-gpu  bench/warm_eval --device cuda --timing: a warm timed eval of the small ReLU pair,
#                  local and through a warm `kbench serve` (KBENCH_WARM_ROUNDS, default 5)
#   service-pair   the warm-pair's evaluation through a warm `kbench serve`, three requests, each
#                  with its wall time and bench/throughput/breakdown.py of its result
#   problems-sample every 4th KernelBench problem of levels 1-3 (build/compat-suites.tar.gz) in one
#                  `kbench problems check --trials 5 --jobs KBENCH_SAMPLE_JOBS (6)`, fresh cache
#   refcache       two evaluations of different candidates of the level1 ReLU: the second reads
#                  the reference outputs and the torch.compile ratio from the reference cache
#   rules          GPU test CudaRules (KernelBench's mnist2 passes the default rules; its share)
#   collective-eval one `kbench eval` of a 2-rank all-reduce with a torch-only candidate (NCCL
#                  under the full sandbox in a minute, where the collectives test takes 5)
#   collectives    GPU test CudaCollectives (NCCL; needs two GPUs)
#   baseline       builds baseline-src/ (an earlier commit's tree, `git archive` of it, when the
#                  copied tree holds one) into baseline-src/build-gpu, for `cost`
#   cost           bench/eval_repeatability with --baseline-kbench: the measure phase's wall time
#                  of this build against the baseline's, case by case, in the same call
#   repeat         bench/eval_repeatability: KBENCH_REPEAT_RUNS (5) runs each of KBENCH_REPEAT_CASES
#                  (three cases; the CV of the median)
#   pch-batch      the binding unit's precompiled header in a batch, against a cache that holds
#                  both headers: a short KBENCH_PCH=on batch fills them, then the first
#                  KBENCH_PCH_BATCH_LIMIT (30) candidates of bench/throughput's batch with
#                  KBENCH_PCH=off and then on (KBENCH_PCH_BATCH_BUDGET_S, 150, each), each from
#                  that cache less everything but the headers; then a cold `kbench eval
#                  --no-timing` of an unseen batch candidate each way (compile.seconds against
#                  the 10 s target; none is left when the limit is 0, the whole batch)
#   jobs-batch     the suite's builds ahead (`--jobs`) in a batch: a short run fills kbench's
#                  headers, then bench/throughput's kbench flow once per LIMIT:JOBS of
#                  KBENCH_JOBS_BATCH (default "0:8 0:16": the whole batch with 8 builds at once,
#                  then 16; LIMIT:JOBS:SPLIT:PCH sets KBENCH_CUDA_SPLIT, default on, and
#                  KBENCH_PCH, default off, for the run), each from that cache less everything but
#                  the headers, within KBENCH_JOBS_BATCH_BUDGET_S (170) each
#   throughput     bench/throughput: kbench against KernelBench's flow on the same mixed batch
#                  (needs build/throughput-kb, KernelBench's src/, and build/throughput-deps,
#                  the packages it imports, carried: docs/gpu-validation.md says how);
#                  KBENCH_THROUGHPUT_LIMIT (candidates, 0 all), KBENCH_THROUGHPUT_BUDGET_S per flow,
#                  KBENCH_THROUGHPUT_FLOWS (kbench,kernelbench; kernelbench-precompile builds alone
#                  for a later call's kernelbench on the same warm machine), KBENCH_THROUGHPUT_KBENCH_EXTRA
#                  (the kbench suite's flags, in place of run.py's --kbench-extra default)
#   breakdown      bench/throughput/warm_breakdown.json as a suite twice in a row (the second
#                  warm: builds and reference cache filled), then bench/throughput/breakdown.py:
#                  where each evaluation's time went, worker by worker and request by request
#   compile-profile a cold `load_inline` build of examples/cuda/level1_relu.py in a fresh cache,
#                  then ninja's log of it: how long each translation unit and the link took
#   honest-flags[:REGEX] the CUDA examples (those whose candidate path matches REGEX) as a suite,
#                  no compile baseline, then bench/flag_rates.py: each flag's rate over them
# Every step's time limit is cut to what is left before KBENCH_VALIDATE_DEADLINE_S (default 590 s
# after the start; the device tool stops a call at 600 s).
# KBENCH_VALIDATE_BUILD=off: no build first (only for steps that need no kbench binary).
# Usage (device tool): bash scripts/gpu-validate-measure.sh STEP [STEP ...]
set -uo pipefail
cd "$(dirname "$0")/.."
export KBENCH_BUILD=build-gpu
# One compile cache for every step: the GPU tests' own (tests/CMakeLists.txt sets it for them),
# so a step that builds ahead (exploits-build) saves the steps after it their builds.
export KBENCH_CACHE_DIR=$PWD/build-gpu/test-cache
R=$(mktemp -d "${TMPDIR:-/tmp}/kbench-gpu-measure.XXXXXX")
chmod o+x "$R" # the workers run as nobody and read the problems the benches write here
export KBENCH_GPU_REPORT_DIR=$R
T0=$(date +%s)
at() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$R/steps.log"; }
pack() { tar czf "${OUT:-.}/gpu-validate-measure.tgz" -C "$(dirname "$R")" "$(basename "$R")"; }
trap pack EXIT

# The UUID names the card, so figures from two calls can be told apart as one host's or two.
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,uuid \
  --format=csv > "$R/gpu.txt" 2>&1
# SQLite's headers, carried (scripts/gpu-deps.sh): the machine cannot install packages.
[ -d .device-carry/deps ] && export KBENCH_DEPS_DIR=$PWD/.device-carry/deps
# KBENCH_VALIDATE_BUILD=off skips the build for steps that do not run kbench (the throughput
# step's KernelBench flows): on a fresh machine the build takes about 150 s of a 600 s call.
if [ "${KBENCH_VALIDATE_BUILD:-on}" = off ]; then
  at "build skipped (KBENCH_VALIDATE_BUILD=off; $(head -2 "$R/gpu.txt" | tail -1))"
else
  scripts/setup.sh > "$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
  at "build ($(head -2 "$R/gpu.txt" | tail -1))"
fi
K=$PWD/build-gpu/kbench
# A step's own limit, cut to what is left before the call's deadline, so the logs are packed
# before the device tool stops the call.
limit() {
  local left=$((${KBENCH_VALIDATE_DEADLINE_S:-590} - $(date +%s) + T0))
  echo $(($1 < left ? $1 : left))
}
# The CUDA entries of examples/examples.json whose candidate matches $1, as a manifest with
# absolute paths (the examples and honest-flags steps).
cuda_examples() {
  python3 - "$1" <<'PY'
import json, re, sys
from pathlib import Path
root = Path("examples").resolve()
suite = json.loads((root / "examples.json").read_text())
suite["entries"] = [
    dict(e, problem=str((root / e["problem"]).resolve()), candidate=str(root / e["candidate"]))
    for e in suite["entries"] if e["device"] == "cuda" and re.search(sys.argv[1], e["candidate"])]
print(json.dumps(suite, indent=1))
PY
}
# One line of a `kbench eval --json` result: its status, compile time and what each unit was
# built against (the cold-build and pch-batch steps).
compile_summary() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["compile"]; print(r["status"], "compile", c["seconds"], "s; pch:", c.get("pch"), "; cuda unit:", c.get("cuda_header"), "; binding unit:", c.get("binding_header"), "; ATen:", c.get("aten_header"), "; wall", r["wall_s"])' "$1" 2>&1 | head -c 700
}
# The batch steps (pch-batch, jobs-batch): bench/throughput's kbench flow against one cache that
# keeps kbench's headers between runs. headers_only removes everything else the runs leave, so
# each run starts with the same headers and no build, reference output or check of its own.
batch_cache=$PWD/build-gpu/batch-cache batch_out=build-gpu/batch-throughput
headers_only() {
  find "$batch_cache" -mindepth 1 -maxdepth 1 ! -name pch ! -name host-pch ! -name aten-subset \
    -exec rm -rf {} +
  rm -rf "$batch_out"
}
batch_run() { # name, candidates (0: all), budget in s, then the suite's flags (none: run.py's)
  local name=$1 n=$2 budget=$3
  shift 3
  KBENCH_CACHE_DIR=$batch_cache timeout "$(limit $((budget + 60)))" python3 bench/throughput/run.py \
    --kbench "$K" --out "$batch_out" --limit "$n" --budget-s "$budget" --flows kbench \
    ${1:+"--kbench-extra=$*"} > "$R/$name.log" 2>&1
  at "$name (KBENCH_PCH=${KBENCH_PCH:-off} KBENCH_CUDA_SPLIT=${KBENCH_CUDA_SPLIT:-on}) rc=$? $(grep '^| kbench' "$batch_out/throughput.md" 2>/dev/null)"
  cp "$batch_out/kbench.jsonl" "$R/$name.jsonl" 2>/dev/null
  cp "$batch_out/throughput.md" "$R/$name.md" 2>/dev/null
}
ctest_step() { # name, limit in s, regex
  (cd build-gpu && timeout "$(limit "$2")" ctest -R "$3" --output-on-failure > "$R/ctest-$1.log" 2>&1)
  at "ctest $1 rc=$? $(grep -E 'tests passed|Failed|\*\*\*' "$R/ctest-$1.log" | tr '\n' ' ' | head -c 400)"
}

for step in "$@"; do
  case $step in
    fidelity)
      PYTHONPATH=build-gpu/python:python timeout "$(limit 240)" python3 bench/timing_fidelity/run.py \
        --out "$R/fidelity" > "$R/fidelity.log" 2>&1
      at "fidelity rc=$?"
      cat "$R/fidelity/timing_fidelity.md" 2>/dev/null || tail -20 "$R/fidelity.log"
      ;;
    repeat-tiny)
      timeout "$(limit 300)" python3 bench/eval_repeatability/run.py --kbench "$K" --out "$R/repeat" --runs 5 \
        --repeat-cases tiny_masked_broadcast --cost-cases "" --extra=--no-compile-baseline \
        > "$R/repeat.log" 2>&1
      at "repeat-tiny rc=$?"
      cat "$R/repeat/eval_repeatability.md" 2>/dev/null || tail -20 "$R/repeat.log"
      ;;
    power-bound)
      timeout "$(limit 280)" python3 bench/power_bound/run.py --kbench "$K" --out "$R/power" > "$R/power.log" 2>&1
      at "power-bound rc=$?"
      cat "$R/power/power_bound.md" 2>/dev/null || tail -20 "$R/power.log"
      ;;
    timing-tests)
      ctest_step timing 240 "CudaTiming.Relu|CudaCounters"
      PYTHONPATH=build-gpu/python:python timeout "$(limit 120)" python3 -m pytest -q tests/gpu/python \
        > "$R/pytest-gpu.log" 2>&1
      at "pytest gpu rc=$? $(tail -1 "$R/pytest-gpu.log")"
      ;;
    unit)
      (cd build-gpu && timeout "$(limit 180)" ctest -L unit --output-on-failure > "$R/ctest-unit.log" 2>&1)
      at "ctest unit rc=$? $(grep -E 'tests passed|Failed|\*\*\*' "$R/ctest-unit.log" | tr '\n' ' ' | head -c 400)"
      ;;
    problems-check) ctest_step problems-check 200 "CudaProblemsCheck" ;;
    counters) ctest_step counters 240 "CudaCounters" ;;
    timing-core)
      ctest_step timing-core 240 "CudaTiming"
      PYTHONPATH=build-gpu/python:python timeout "$(limit 120)" python3 -m pytest -q tests/gpu/python \
        > "$R/pytest-gpu.log" 2>&1
      at "pytest gpu rc=$? $(tail -1 "$R/pytest-gpu.log")"
      ;;
    side-stream) ctest_step side-stream 120 "CudaTiming.SideStream" ;;
    pytest-gpu)
      PYTHONPATH=build-gpu/python:python timeout "$(limit 120)" python3 -m pytest -q -s tests/gpu/python \
        > "$R/pytest-gpu.log" 2>&1
      at "pytest gpu rc=$? $(tail -1 "$R/pytest-gpu.log")"
      ;;
    exploits) ctest_step exploits 560 "CudaExploits|CudaRules|CudaTrivialAnswers" ;;
    exploits-build|exploits-build:*)
      python3 - "${step#exploits-build}" > "$R/exploits-build.json" <<'PY'
import json, re, sys
from pathlib import Path
root = Path("examples/exploits").resolve()
corpus = json.loads((root / "exploits.json").read_text())
entries, seen = [], set()
def add(problem, candidate, rules):
    if candidate not in seen:
        seen.add(candidate)
        entries.append({"problem": problem, "candidate": candidate, "device": "cuda", "rules": rules})
for e in corpus["entries"]:
    if e["device"] != "cuda" or "dynamic" not in e:
        continue
    problem = str((root / e.get("problem", corpus["problem"])).resolve())
    add(problem, str(root / e["candidate"]), e["dynamic"].get("rules", "default"))
    if "twin" in e["dynamic"]:
        add(problem, str((root / e["dynamic"]["twin"]).resolve()), "default")
tests = Path("tests/e2e").resolve()
add(str(tests / "problems/kernelbench_mnist2.py"), str(tests / "candidates/kernelbench_mnist2_new.py"), "default")
if sys.argv[1]:  # exploits-build:REGEX also builds the CUDA examples whose candidate matches
    examples = Path("examples").resolve()
    for e in json.loads((examples / "examples.json").read_text())["entries"]:
        if e["device"] == "cuda" and re.search(sys.argv[1][1:], e["candidate"]):
            add(str((examples / e["problem"]).resolve()), str(examples / e["candidate"]), e.get("rules", "default"))
print(json.dumps({"entries": entries}, indent=1))
PY
      timeout "$(limit 300)" "$K" suite "$R/exploits-build.json" --build-only --jobs "$(nproc)" \
        --device cuda > "$R/exploits-build.txt" 2>&1
      at "exploits-build rc=$? $(tail -1 "$R/exploits-build.txt")"
      ;;
    exploits:*)
      part=$((${part:-0} + 1))
      KBENCH_EXPLOITS_FILTER=${step#exploits:} ctest_step "exploits-part$part" 560 "CudaExploits"
      cat "$R/exploits.txt" 2>/dev/null | tail -40
      ;;
    rules) ctest_step rules 200 "CudaRules" ;;
    native)
      for run in cold cached; do
        timeout "$(limit 120)" "$K" eval problems/level1/1_relu.py examples/native/level1_relu.cu \
          --device cuda --no-compile-baseline --json "$R/native-$run.json" > "$R/native-$run.txt" 2>&1
        at "native $run rc=$? $(grep -E '^(status|compile|cand time|speedup|wall time)' "$R/native-$run.txt" | tr '\n' ' ' | head -c 500)"
      done
      ;;
    transfer)
      for device in ${KBENCH_TRANSFER_DEVICES:-cuda cpu}; do
        timeout "$(limit 150)" python3 bench/transfer/run.py --device $device --build build-gpu \
          --sizes-mb 16,256,1024,4096 --rounds 3 > "$R/transfer-$device.txt" 2>&1
        at "transfer $device rc=$?"
        cat "$R/transfer-$device.txt"
      done
      ;;
    warm-pair)
      for run in cold warm warm-compiled; do
        extra=--no-compile-baseline
        [ $run = warm-compiled ] && extra=
        timeout "$(limit 150)" "$K" eval examples/exploits/problem_relu.py examples/cuda/level1_relu.py \
          --device cuda $extra --json "$R/pair-$run.json" > "$R/pair-$run.txt" 2>&1
        python3 bench/throughput/breakdown.py "$R/pair-$run.json" > "$R/pair-$run.breakdown" 2>&1
        at "warm-pair $run rc=$? $(head -1 "$R/pair-$run.breakdown" | head -c 400)"
      done
      ;;
    big-check*)
      problem=${step#big-check}
      problem=${problem#:}
      mkdir -p /tmp/suites && { [ -d /tmp/suites/kb ] || tar -xzf build/compat-suites.tar.gz -C /tmp/suites; }
      live=python/kbench/worker/tensor_io.py
      cp $live "$R/tensor_io_after.py"
      for version in ${KBENCH_BIG_CHECK_ORDER:-before after before after}; do
        cp "$([ $version = before ] && echo build/tensor_io_before.py || echo "$R/tensor_io_after.py")" $live
        timeout "$(limit "${KBENCH_BIG_CHECK_LIMIT:-150}")" "$K" problems check "/tmp/suites/kb/KernelBench/${problem:-level1/5_Matrix_scalar_multiplication.py}" \
          --device cuda --variant standard --trials "${KBENCH_BIG_CHECK_TRIALS:-3}" \
          --jsonl "$R/big-check-$version-$RANDOM.jsonl" \
          > "$R/big-check-$version.txt" 2>&1
        at "big-check $version rc=$? $(grep -E -- '-> ' "$R/big-check-$version.txt" | tail -1)"
      done
      cp "$R/tensor_io_after.py" $live
      ;;
    cold-build)
      TORCH_CUDA_ARCH_LIST=9.0 timeout "$(limit 300)" python3 bench/cold_build/run.py \
        examples/cuda/level1_relu.py --modes "${KBENCH_COLD_MODES:-stock,light+host+bind,light+host+bind+aten}" \
        --pch-root "$(mktemp -d)" > "$R/cold-build.txt" 2>&1 # the headers (0.4-0.75 GB) stay out of $R
      at "cold-build rc=$?"
      cat "$R/cold-build.txt"
      # Cold `kbench eval`s with the defaults in a fresh cache: the first candidate builds
      # without a host header and asks for one; the second, the same kernel under other names
      # (a build nobody has made), builds against it. compile.seconds, compile.cuda_header and
      # compile.binding_header.
      cache=$(mktemp -d); chmod 755 "$cache"
      sed 's/relu_kernel/relu_kernel_two/g; s/kbench_cuda_relu/kbench_cuda_relu_two/' \
        examples/cuda/level1_relu.py > "$R/level1_relu_two.py"
      for candidate in examples/cuda/level1_relu.py "$R/level1_relu_two.py"; do
        name=$(basename "$candidate" .py)
        s=$(date +%s)
        KBENCH_CACHE_DIR=$cache timeout "$(limit 200)" "$K" eval problems/level1/1_relu.py \
          "$candidate" --device cuda --no-timing --json "$R/cold-eval-$name.json" \
          > "$R/cold-eval-$name.txt" 2>&1
        at "cold eval $name rc=$? in $(($(date +%s) - s)) s: $(compile_summary "$R/cold-eval-$name.json")"
      done
      rm -rf "$cache"
      ;;
    warm-eval)
      timeout "$(limit 300)" python3 bench/warm_eval/run.py --kbench "$K" --rounds 3 > "$R/warm-eval.txt" 2>&1
      at "warm-eval rc=$?"
      tail -12 "$R/warm-eval.txt"
      ;;
    warm-eval-gpu)
      # The warm evaluation with timing on the H200 (issue 15's 3 s target): local (fork server
      # per kbench process) against a warm `kbench serve`, the small ReLU pair, in one run.
      timeout "$(limit 300)" python3 bench/warm_eval/run.py --kbench "$K" --python "$(command -v python3)" \
        --device cuda --timing --cases small --rounds "${KBENCH_WARM_ROUNDS:-5}" \
        --keep "$R/warm-eval-gpu" > "$R/warm-eval-gpu.txt" 2>&1
      at "warm-eval-gpu rc=$?"
      tail -12 "$R/warm-eval-gpu.txt"
      for f in "$R"/warm-eval-gpu/*.json; do
        python3 bench/throughput/breakdown.py "$f" > "${f%.json}.breakdown" 2>&1
        echo "$(basename "$f"): $(head -1 "${f%.json}.breakdown" | cut -d: -f2- | head -c 300)"
      done
      ;;
    service-pair)
      # The warm-pair's evaluation through a warm `kbench serve`, three requests (trials 6, 7, 8:
      # each a new evaluation, not the store's answer), each with its wall time and breakdown.
      db=$(mktemp -d)/results.sqlite
      "$K" serve --port 0 --jobs 1 --db "$db" > "$R/serve.out" 2> "$R/serve.log" &
      serve_pid=$!
      url=
      for _ in $(seq 100); do
        url=$(grep -o 'http://127.0.0.1:[0-9]*' "$R/serve.out" | head -1)
        [ -n "$url" ] && break
        sleep 0.2
      done
      for trials in 6 7 8; do
        s=$(date +%s%N)
        timeout "$(limit 120)" "$K" eval examples/exploits/problem_relu.py examples/cuda/level1_relu.py \
          --device cuda --service "$url" --trials $trials --json "$R/service-$trials.json" \
          > "$R/service-$trials.txt" 2>&1
        at "service-pair trials $trials rc=$? wall $((($(date +%s%N) - s) / 1000000)) ms"
        python3 bench/throughput/breakdown.py "$R/service-$trials.json" > "$R/service-$trials.breakdown" 2>&1
        head -c 1500 "$R/service-$trials.breakdown"
      done
      kill $serve_pid
      ;;
    problems-sample)
      # Issue 16 item 2: every 4th KernelBench problem of levels 1-3 in one batch, fresh cache.
      mkdir -p /tmp/suites && { [ -d /tmp/suites/kb ] || tar -xzf build/compat-suites.tar.gz -C /tmp/suites; }
      cache=$(mktemp -d); chmod 755 "$cache"
      sample=$(ls /tmp/suites/kb/KernelBench/level{1,2,3}/*.py | sort -V | awk 'NR%4==1')
      start=$(date +%s)
      KBENCH_CACHE_DIR=$cache timeout "$(limit 560)" "$K" problems check $sample --device cuda \
        --variant standard --trials 5 --jobs "${KBENCH_SAMPLE_JOBS:-6}" \
        --jsonl "$R/problems-sample.jsonl" > "$R/problems-sample.txt" 2>&1
      at "problems-sample rc=$? $(wc -l < "$R/problems-sample.jsonl") of $(echo $sample | wc -w) in $(($(date +%s) - start)) s"
      tail -3 "$R/problems-sample.txt"
      rm -rf "$cache"
      ;;
    refcache)
      # The level1 ReLU's trials (1.3 GB) are above the cache's 256 MiB cap: only the
      # torch.compile ratio is reused there; the small ReLU of the exploit corpus reuses both.
      for pair in problems/level1/1_relu.py:examples/cuda/level1_relu.py \
        problems/level1/1_relu.py:examples/native/level1_relu.cu \
        examples/exploits/problem_relu.py:tests/e2e/candidates/relu_torch.py \
        examples/exploits/problem_relu.py:examples/native/level1_relu.cu; do
        problem=${pair%%:*} candidate=${pair#*:}
        name=$(basename "$problem" .py)-$(basename "$candidate")
        rules=default; case $candidate in *relu_torch.py) rules=structural ;; esac
        timeout "$(limit 200)" "$K" eval "$problem" "$candidate" --device cuda --rules "$rules" \
          --json "$R/refcache-$name.json" > "$R/refcache-$name.txt" 2>&1
        at "refcache $name rc=$? $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], r.get("reference_cache"), "measure", r["timing"].get("wall_s"), "wall", r["wall_s"], "vs compiled", r["timing"].get("speedup_vs_compiled"))' "$R/refcache-$name.json" 2>&1 | head -c 600)"
      done
      ;;
    disassemble)
      timeout "$(limit 150)" "$K" disassemble examples/cuda/level1_relu.py > "$R/disassemble.txt" 2>&1
      at "disassemble rc=$? $(grep -m1 '^== ' "$R/disassemble.txt"), $(grep -c -E 'LDG|STG' "$R/disassemble.txt") LDG/STG lines; toolkit: $(ls /usr/local/cuda/bin/cuobjdump 2>&1)"
      ;;
    examples) ctest_step examples 590 "CudaExamples" ;;
    examples:*)
      cuda_examples "${step#examples:}" > "$R/examples-subset.json"
      at "examples subset: $(grep -c '"candidate"' "$R/examples-subset.json") entries"
      KBENCH_GPU_MANIFEST=$R/examples-subset.json ctest_step examples-subset 590 "CudaExamples"
      cat "$R/examples-table.txt" 2>/dev/null | tail -20
      ;;
    collective-eval)
      sed 's/^class Model(/class ModelNew(/' problems/collectives/1_all_reduce_mean_affine.py \
        > "$R/collective_candidate.py"
      timeout "$(limit 200)" "$K" eval problems/collectives/1_all_reduce_mean_affine.py \
        "$R/collective_candidate.py" --device cuda --world-size 2 --rules structural \
        --no-compile-baseline --json "$R/collective-eval.json" > "$R/collective-eval.txt" 2>&1
      at "collective-eval rc=$? sandbox: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("sandbox"))' "$R/collective-eval.json" 2>&1 | head -c 300)"
      tail -25 "$R/collective-eval.txt"
      ;;
    collectives) ctest_step collectives 400 "CudaCollectives" ;;
    baseline)
      if [ -d baseline-src ]; then
        py=$(command -v python3)
        (cd baseline-src && cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DPython3_EXECUTABLE="$py" -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)" > "$R/baseline-build.log" 2>&1 &&
          timeout "$(limit 240)" cmake --build build-gpu -j "$(nproc)" --target kbench kbench-worker >> "$R/baseline-build.log" 2>&1)
        at "baseline build rc=$? ($(head -c 60 baseline-src/COMMIT 2>/dev/null))"
      else
        at "baseline: no baseline-src/ in the tree"
      fi
      ;;
    cost)
      timeout "$(limit 420)" python3 bench/eval_repeatability/run.py --kbench "$K" --out "$R/cost" --runs 2 \
        --baseline-kbench "$PWD/baseline-src/build-gpu/kbench" \
        --repeat-cases "${KBENCH_COST_CASES:-tiny_masked_broadcast,relu_20us,relu_500us}" --cost-cases "" \
        --extra=--no-compile-baseline > "$R/cost.log" 2>&1
      at "cost rc=$?"
      cat "$R/cost/eval_repeatability.md" 2>/dev/null || tail -20 "$R/cost.log"
      ;;
    repeat)
      timeout "$(limit 420)" python3 bench/eval_repeatability/run.py --kbench "$K" --out "$R/repeat" \
        --runs "${KBENCH_REPEAT_RUNS:-5}" \
        --repeat-cases "${KBENCH_REPEAT_CASES:-tiny_masked_broadcast,relu_20us,relu_100us}" --cost-cases "" \
        --extra=--no-compile-baseline > "$R/repeat.log" 2>&1
      at "repeat rc=$?"
      cat "$R/repeat/eval_repeatability.md" 2>/dev/null || tail -20 "$R/repeat.log"
      ;;
    pch-batch)
      rm -rf "$batch_cache" "$batch_out"
      KBENCH_PCH=on batch_run pch-batch-prime 8 150
      at "pch-batch headers: $(ls "$batch_cache/pch" "$batch_cache/host-pch" 2>&1 | tr '\n' ' ' | head -c 300)"
      limit_n=${KBENCH_PCH_BATCH_LIMIT:-30}
      for mode in off on; do
        headers_only
        KBENCH_PCH=$mode batch_run "pch-batch-$mode" "$limit_n" "${KBENCH_PCH_BATCH_BUDGET_S:-150}"
      done
      # Two batch candidates none of the runs built, one cold build each way.
      index=$limit_n
      modes="off on"
      [ "$limit_n" -gt 0 ] || { modes=""; at "pch-batch cold eval: skipped (the runs built the whole batch)"; }
      for mode in $modes; do
        read -r problem candidate < <(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[int(sys.argv[2])]; print(e["problem"], e["candidate"])' "$batch_out/batch/batch.json" "$index" 2>/dev/null)
        index=$((index + 1))
        [ -n "${candidate:-}" ] || { at "pch-batch cold eval: no batch.json"; break; }
        KBENCH_CACHE_DIR=$batch_cache KBENCH_PCH=$mode timeout "$(limit 120)" "$K" eval "$problem" "$candidate" \
          --device cuda --no-timing --json "$R/pch-cold-$mode.json" > "$R/pch-cold-$mode.txt" 2>&1
        at "pch-batch cold eval KBENCH_PCH=$mode rc=$? $(basename "$candidate"): $(compile_summary "$R/pch-cold-$mode.json")"
      done
      ;;
    jobs-batch)
      # The same batch with more or fewer builds ahead: every run from the same headers.
      rm -rf "$batch_cache" "$batch_out"
      # Both headers (KBENCH_PCH=on asks for the binding unit's), for runs with either setting.
      KBENCH_PCH=on batch_run jobs-batch-prime 6 150
      at "jobs-batch headers: $(ls "$batch_cache/host-pch" "$batch_cache/aten-subset" 2>&1 | tr '\n' ' ' | head -c 300)"
      for spec in ${KBENCH_JOBS_BATCH:-0:8 0:16}; do
        IFS=: read -r n jobs split pch <<< "$spec"
        headers_only
        # run.py's default suite flags, and the builds ahead; SPLIT (on, the default, or off) is
        # KBENCH_CUDA_SPLIT for the run's workers, PCH (off, the default, or on) KBENCH_PCH.
        KBENCH_CUDA_SPLIT=${split:-on} KBENCH_PCH=${pch:-off} \
          batch_run "jobs-batch-$n-jobs$jobs-split${split:-on}-pch${pch:-off}" "$n" \
          "${KBENCH_JOBS_BATCH_BUDGET_S:-170}" --rules structural --no-compile-baseline --jobs "$jobs"
      done
      ;;
    throughput)
      # The flows' builds stay out of $R (they would swell the tarball); the figures are copied.
      timeout "$(limit 560)" python3 bench/throughput/run.py --kbench "$K" --kernelbench build/throughput-kb \
        --deps build/throughput-deps --out build-gpu/throughput --limit "${KBENCH_THROUGHPUT_LIMIT:-0}" \
        --budget-s "${KBENCH_THROUGHPUT_BUDGET_S:-240}" --flows "${KBENCH_THROUGHPUT_FLOWS:-kbench,kernelbench}" \
        ${KBENCH_THROUGHPUT_KBENCH_EXTRA:+"--kbench-extra=$KBENCH_THROUGHPUT_KBENCH_EXTRA"} \
        > "$R/throughput.log" 2>&1
      at "throughput rc=$?"
      # kbench.jsonl too: its phases' requests say where each evaluation's time went.
      cp build-gpu/throughput/*.json build-gpu/throughput/*.jsonl build-gpu/throughput/*.md \
        build-gpu/throughput/*.log "$R/" 2>/dev/null
      cat build-gpu/throughput/throughput.md 2>/dev/null || tail -30 "$R/throughput.log"
      ;;
    breakdown)
      for run in first warm; do
        timeout "$(limit 200)" "$K" suite bench/throughput/warm_breakdown.json --device cuda \
          --no-compile-baseline --jsonl "$R/breakdown-$run.jsonl" > "$R/breakdown-$run.txt" 2>&1
        at "breakdown $run rc=$?"
        python3 bench/throughput/breakdown.py "$R/breakdown-$run.jsonl" | tee "$R/breakdown-$run.md"
      done
      ;;
    compile-profile)
      cache=$(mktemp -d "${TMPDIR:-/tmp}/kbench-cold.XXXXXX") && chmod 755 "$cache"
      KBENCH_CACHE_DIR=$cache timeout "$(limit 200)" "$K" eval problems/level1/1_relu.py \
        examples/cuda/level1_relu.py --device cuda --no-timing --json "$R/compile-profile.json" \
        > "$R/compile-profile.txt" 2>&1
      at "compile-profile rc=$? $(grep -E '^(status|compile)' "$R/compile-profile.txt" | tr '\n' ' ' | head -c 300)"
      find "$cache" -name .ninja_log | while read -r log; do
        echo "== $log"; awk 'NR > 1 { printf "%7d ms  %s\n", $2 - $1, $4 }' "$log"
        cp "$(dirname "$log")/build.ninja" "$R/compile-profile-build.ninja"
      done | tee "$R/compile-profile-ninja.txt"
      ;;
    honest-flags|honest-flags:*)
      regex=${step#honest-flags}; regex=${regex#:}
      cuda_examples "${regex:-.}" > "$R/honest-subset.json"
      at "honest subset: $(grep -c '"candidate"' "$R/honest-subset.json") entries"
      timeout "$(limit 560)" "$K" suite "$R/honest-subset.json" --only-device cuda --device cuda \
        --no-compile-baseline --jsonl "$R/honest.jsonl" > "$R/honest-table.txt" 2>&1
      at "honest suite rc=$? $(grep -E 'as expected' "$R/honest-table.txt" | tail -1)"
      python3 bench/flag_rates.py "$R/honest.jsonl" --manifest "$R/honest-subset.json" --messages \
        --expect-zero off_stream_work,unstable_timing > "$R/flag-rates.txt" 2>&1
      at "flag rates rc=$?"
      tail -30 "$R/honest-table.txt"
      cat "$R/flag-rates.txt"
      ;;
    *) at "unknown step $step" ;;
  esac
done
at done
