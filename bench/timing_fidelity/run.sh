#!/usr/bin/env bash
# Builds the kbench_native extension (CUPTI tracer) with the GPU machine's torch environment and
# runs the fidelity benchmark. Usage: bash bench/timing_fidelity/run.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-${OUT:-bench-out}}
build=${KBENCH_BUILD:-build-bench}
python=${KBENCH_PYTHON:-python3}
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE="$(command -v "$python")" -Dpybind11_DIR="$("$python" -m pybind11 --cmakedir)" > /dev/null
cmake --build "$build" --target kbench_native_extension -j "$(nproc)" > /dev/null
PYTHONPATH="$build/python:python" "$python" bench/timing_fidelity/run.py --out "$out"
