#!/usr/bin/env bash
# Prepares .device-carry/deps for the GPU machine, which cannot install packages and lacks
# SQLite's headers (its libsqlite3.so.0 is there: Python's sqlite3 uses it). Run here, then carry
# `.device-carry` in the device call and set KBENCH_DEPS_DIR=.device-carry/deps for
# scripts/setup.sh (the GPU scripts do). cpp-httplib is not carried: without it the GPU build
# leaves out `kbench serve` (src/service/CMakeLists.txt) and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -e /usr/include/sqlite3.h ] || { echo "gpu-deps: install libsqlite3-dev here first" >&2; exit 1; }
mkdir -p .device-carry/deps/include
cp /usr/include/sqlite3.h /usr/include/sqlite3ext.h .device-carry/deps/include/
echo "gpu-deps: .device-carry/deps ready (SQLite $(awk '/define SQLITE_VERSION /{print $3}' /usr/include/sqlite3.h))"
