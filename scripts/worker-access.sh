#!/usr/bin/env bash
# For a root kbench, whose workers run as KBENCH_WORKER_USER (default nobody): lets that user
# reach what a worker needs, by adding search permission (o+x, never read) to each directory
# above it that lacks it. A venv under /root (mode 0700) is the usual case: nobody cannot
# enter /root. Nothing else changes: no file becomes readable that was not, and no directory
# becomes listable. Run by scripts/setup.sh; run it yourself after moving the environment or
# the cache. Does nothing unless run as root, or when KBENCH_WORKER_USER=root.
#
# Usage: scripts/worker-access.sh PYTHON [PATH...]
#   PYTHON  the interpreter the workers embed (its environment and its base installation)
#   PATH    more paths the workers need (the build directory, the cache, problem folders)
set -euo pipefail
say() { printf 'worker-access: %s\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || exit 0
case "${KBENCH_WORKER_USER:-}" in root | 0 | 0:0) exit 0 ;; esac
[ $# -ge 1 ] || { say "usage: $0 PYTHON [PATH...]"; exit 64; }
python=$1
shift

# The interpreter, the environment it belongs to, its base installation and its libpython
# (kbench-worker loads it at exec), each resolved through links.
mapfile -t paths < <("$python" -c '
import os, sys, sysconfig
for p in (sys.executable, sys.prefix, sys.base_prefix, sysconfig.get_config_var("LIBDIR") or ""):
    if p:
        print(p)
        print(os.path.realpath(p))
')
paths+=("$python" "$@")

opened=()
for path in "${paths[@]}"; do
  # A cache not made yet: its first existing ancestor, which kbench will create it beneath.
  while [ ! -e "$path" ] && [ "$path" != / ] && [ "$path" != . ]; do path=$(dirname "$path"); done
  if [ -d "$path" ]; then
    dir=$(cd "$path" && pwd -P)
  else
    dir=$(cd "$(dirname "$path")" && pwd -P)
  fi
  while [ "$dir" != / ]; do
    if [ "$(stat -c %A "$dir" | cut -c10)" != x ] && [ "$(stat -c %A "$dir" | cut -c10)" != t ]; then
      chmod o+x "$dir"
      opened+=("$dir")
    fi
    dir=$(dirname "$dir")
  done
done
if ((${#opened[@]})); then
  say "workers run as ${KBENCH_WORKER_USER:-nobody}: made searchable (o+x, not listable): ${opened[*]}"
fi
