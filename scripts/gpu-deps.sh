#!/usr/bin/env bash
# Prepares .device-carry/deps for the GPU machine, which cannot install packages and lacks
# SQLite's headers (its libsqlite3.so.0 is there: Python's sqlite3 uses it). Run here, then carry
# `.device-carry` in the device call and set KBENCH_DEPS_DIR=.device-carry/deps for
# scripts/setup.sh (the GPU scripts do). cpp-httplib, for `kbench serve`, is carried as Debian
# builds it (header and shared library; src/service/CMakeLists.txt finds them there without
# pkg-config); without it the GPU build leaves out `kbench serve` and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -e /usr/include/sqlite3.h ] || { echo "gpu-deps: install libsqlite3-dev here first" >&2; exit 1; }
mkdir -p .device-carry/deps/include
cp /usr/include/sqlite3.h /usr/include/sqlite3ext.h .device-carry/deps/include/
if [ -e /usr/include/httplib.h ] && [ -e /usr/lib/x86_64-linux-gnu/libcpp-httplib.so ]; then
  mkdir -p .device-carry/deps/lib
  cp /usr/include/httplib.h .device-carry/deps/include/
  [ -e /usr/include/zlib.h ] && cp /usr/include/zlib.h /usr/include/zconf.h .device-carry/deps/include/
  cp -P /usr/lib/x86_64-linux-gnu/libcpp-httplib.so* .device-carry/deps/lib/
else
  echo "gpu-deps: no libcpp-httplib-dev here: kbench serve will not be built there" >&2
fi
echo "gpu-deps: .device-carry/deps ready (SQLite $(awk '/define SQLITE_VERSION /{print $3}' /usr/include/sqlite3.h))"
