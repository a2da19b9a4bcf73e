#!/usr/bin/env bash
# Sets up a machine for kbench and builds it: distribution packages, a Python environment with
# torch (kept outside the clone and reused between runs), then CMake configure + build.
#
# Environment:
#   KBENCH_PYTHON   interpreter of an environment that already has torch (skips the venv)
#   KBENCH_VENV     where to create the venv (default ~/.cache/kbench/venv)
#   KBENCH_BUILD    build directory (default build)
#   KBENCH_TORCH    torch requirement for a new venv (default torch==2.11.0)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${KBENCH_BUILD:-build}
venv=${KBENCH_VENV:-$HOME/.cache/kbench/venv}
torch_req=${KBENCH_TORCH:-torch==2.11.0}
say() { printf 'setup: %s\n' "$*" >&2; }

# 1. Build tools and C++ libraries, from the distribution where they are missing. pybind11
#    comes from the Python environment below, so that it matches the interpreter. SQLite's
#    headers may come from KBENCH_DEPS_DIR instead (the GPU machine cannot install packages:
#    scripts/gpu-deps.sh prepares that folder here, to be carried). cpp-httplib and pkg-config
#    are wanted, not needed: without them `kbench serve` is not built. Chromium is wanted for
#    the dashboard's browser tests and bench/web (they skip, saying so, without it); hiredis for
#    the Redis work queue (`kbench worker`, `suite --queue`), and redis-server for its tests;
#    gdb so that a test whose background service does not stop prints that service's stacks.
declare -A needs=(
  [cmake]=cmake [g++]=g++ [make]=make
  [/usr/include/gtest/gtest.h]=libgtest-dev
  [/usr/include/nlohmann/json.hpp]=nlohmann-json3-dev
  [/usr/include/CLI/CLI.hpp]=libcli11-dev
  [/usr/include/fmt/format.h]=libfmt-dev
  [/usr/include/sqlite3.h]=libsqlite3-dev
  [curl-config]=libcurl4-openssl-dev
)
declare -A wants=(
  [/usr/include/httplib.h]=libcpp-httplib-dev
  [pkg-config]=pkg-config
  [chromium]=chromium
  [/usr/include/hiredis/hiredis.h]=libhiredis-dev
  [redis-server]=redis-server
  [gdb]=gdb
)
deps_dir=${KBENCH_DEPS_DIR:-}
present() {
  if [[ $1 == /usr/include/* ]] && [ -n "$deps_dir" ] && [ -e "$deps_dir/include/${1#/usr/include/}" ]; then
    return 0
  fi
  if [[ $1 == /* ]]; then [ -e "$1" ]; else command -v "$1" >/dev/null; fi
}
missing=() wanted=()
for what in "${!needs[@]}"; do present "$what" || missing+=("${needs[$what]}"); done
for what in "${!wants[@]}"; do present "$what" || wanted+=("${wants[$what]}"); done
if ((${#missing[@]} + ${#wanted[@]})); then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] && apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" "${wanted[@]}" >/dev/null; then
    say "installed ${missing[*]} ${wanted[*]}"
  elif ((${#missing[@]})); then
    say "could not install ${missing[*]}: install them, then run this again"
    exit 1
  else
    say "could not install ${wanted[*]}: without cpp-httplib kbench serve is not built, without hiredis kbench worker; without chromium or redis-server their tests skip"
  fi
fi

# 2. A Python environment with torch whose interpreter has a shared libpython to embed.
has_torch() { "$1" -c 'import torch, safetensors, pybind11' >/dev/null 2>&1; }
embeddable() {
  "$1" -c 'import sysconfig,sys,os; d=sysconfig.get_config_var("LIBDIR"); l=sysconfig.get_config_var("LDLIBRARY") or ""; sys.exit(0 if l.endswith(".so") or os.path.exists(os.path.join(d, "libpython%d.%d.so" % sys.version_info[:2])) else 1)' 2>/dev/null
}
python=""
if [ -n "${KBENCH_PYTHON:-}" ]; then
  has_torch "$KBENCH_PYTHON" || { say "KBENCH_PYTHON=$KBENCH_PYTHON lacks torch, safetensors or pybind11"; exit 1; }
  python=$KBENCH_PYTHON
elif [ -x "$venv/bin/python" ] && has_torch "$venv/bin/python"; then
  python=$venv/bin/python
elif command -v python3 >/dev/null && has_torch "$(command -v python3)" && embeddable "$(command -v python3)"; then
  python=$(command -v python3) # an image that ships torch (the GPU machine)
else
  base=${KBENCH_BASE_PYTHON:-}
  if [ -z "$base" ]; then
    for candidate in python3.12 python3.11 python3; do
      if command -v "$candidate" >/dev/null && embeddable "$(command -v "$candidate")"; then
        base=$(command -v "$candidate")
        break
      fi
    done
  fi
  [ -n "$base" ] || { say "no Python with a shared libpython found; set KBENCH_BASE_PYTHON"; exit 1; }
  say "creating $venv from $base and installing $torch_req (once; several GB)"
  mkdir -p "$(dirname "$venv")"
  "$base" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "$torch_req" numpy safetensors pybind11 ninja pytest
  python=$venv/bin/python
fi
# The Python tests need pytest; a venv of ours gets it, a given environment is told.
if ! "$python" -c 'import pytest' >/dev/null 2>&1; then
  if [ "$python" = "$venv/bin/python" ]; then
    "$python" -m pip install -q pytest
  else
    say "pytest is not installed in $python: the Python tests will not run"
  fi
fi
# `kbench disassemble` needs cuobjdump and nvdisasm: the CUDA toolkit's, or NVIDIA's wheels in a
# venv of ours (the CI machine's toolkit compiles but ships neither).
if ! command -v cuobjdump >/dev/null && [ ! -x /usr/local/cuda/bin/cuobjdump ] &&
  [ "$python" = "$venv/bin/python" ] &&
  ! "$python" -c 'import sys, os, glob; sys.exit(not glob.glob(os.path.join(sys.prefix, "lib", "python*", "site-packages", "nvidia", "cu1*", "bin", "nvdisasm")))'; then
  "$python" -m pip install -q "nvidia-cuda-cuobjdump>=13" "nvidia-cuda-nvdisasm>=13" ||
    say "could not install cuobjdump and nvdisasm: kbench disassemble will say so"
fi
say "python: $python ($("$python" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'))"

# 3. Configure and build. Ninja when the environment has it (torch needs it anyway).
generator=()
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
pybind11_dir=$("$python" -m pybind11 --cmakedir)
deps=()
if [ -n "$deps_dir" ] && [ -e "$deps_dir/include/sqlite3.h" ] && [ ! -e /usr/include/sqlite3.h ]; then
  # The carried header with the machine's own library (the runtime every Python there uses).
  sqlite_library=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
  deps=(-DSQLite3_INCLUDE_DIR="$(cd "$deps_dir/include" && pwd)" -DSQLite3_LIBRARY="$sqlite_library")
fi
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPython3_EXECUTABLE="$python" -Dpybind11_DIR="$pybind11_dir" "${deps[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
say "built $build_dir/kbench and $build_dir/kbench-worker"

# 4. As root, kbench starts its workers as KBENCH_WORKER_USER (default nobody): that user must
#    reach the environment, the build, the sources and the cache (a venv under /root, mode 0700,
#    is out of its reach until /root is searchable).
scripts/worker-access.sh "$python" "$build_dir" "$(pwd)" \
  "${KBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kbench}"
