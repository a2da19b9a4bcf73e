#!/usr/bin/env bash
# One call on the GPU machine: build kbench there with what is installed, run the unit tests and
# the GPU tests, and leave the logs and the examples table in $OUT (or ./gpu-out).
# Usage (device tool): bash scripts/gpu-validate.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
export KBENCH_BUILD=${KBENCH_BUILD:-build-gpu}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  python3 -c 'import sys, torch; print(sys.executable, torch.__version__, torch.version.cuda)'
} > "$out/machine.txt" 2>&1
start=$(date +%s)
# SQLite's headers, carried (scripts/gpu-deps.sh): the machine cannot install packages.
[ -d .device-carry/deps ] && export KBENCH_DEPS_DIR=$PWD/.device-carry/deps
scripts/setup.sh > "$out/build.log" 2>&1 || { echo "build failed"; tail -40 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
(cd "$KBENCH_BUILD" && ctest -L unit 2>&1 | tail -3) | tee "$out/unit.txt"
export KBENCH_GPU_REPORT_DIR=$out
# KBENCH_GPU_CANDIDATES (comma-separated candidate paths as the manifest writes them) narrows
# the suite to those entries, for a short GPU lease.
if [ -n "${KBENCH_GPU_CANDIDATES:-}" ]; then
  python3 - "$out/manifest.json" <<'PY'
import json, os, sys
doc = json.load(open("examples/examples.json"))
keep = set(os.environ["KBENCH_GPU_CANDIDATES"].split(","))
doc["entries"] = [e for e in doc["entries"] if e["candidate"] in keep]
for e in doc["entries"]:
    for k in ("problem", "candidate"):
        e[k] = os.path.abspath(os.path.join("examples", e[k]))
json.dump(doc, open(sys.argv[1], "w"), indent=1)
PY
  export KBENCH_GPU_MANIFEST=$out/manifest.json
fi
(cd "$KBENCH_BUILD" && timeout "${KBENCH_GPU_TEST_TIMEOUT:-480}" ctest -L gpu --output-on-failure) > "$out/gpu-tests.log" 2>&1
echo "gpu tests rc=$?  total $(( $(date +%s) - start )) s"
tail -5 "$out/gpu-tests.log"
# The bundled problems checked on the GPU (reference device time, launch-bound flag, memory).
if [ -n "${KBENCH_GPU_PROBLEMS_CHECK:-}" ]; then
  # KBENCH_GPU_PROBLEMS_CHECK_ARGS narrows it (for example "--variant standard --trials 2").
  pc_start=$(date +%s)
  # shellcheck disable=SC2086 # the extra arguments are meant to split
  timeout "${KBENCH_GPU_PROBLEMS_CHECK_TIMEOUT:-300}" "$KBENCH_BUILD/kbench" problems check \
    problems --device cuda ${KBENCH_GPU_PROBLEMS_CHECK_ARGS:---trials 3} \
    --json "$out/problems-check.json" > "$out/problems-check.txt" 2>&1
  echo "problems check rc=$?  $(( $(date +%s) - pc_start )) s"
  head -40 "$out/problems-check.txt"
fi
cat "$out/examples-table.txt" 2>/dev/null | grep -v '^kbench suite: \[' | tail -45
