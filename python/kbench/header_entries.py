"""What kbench's two header caches share on kbench's side: pch.py (torch/extension.h for
load_inline's binding unit) and host_pch.py (cudafe++'s headers for nvcc's host compile).

An entry is `<root>/<key>/`: the header, its `.gch` and `entry.json`, built in a temporary
folder and renamed into place, so a worker sees a whole entry or none; mode 0644 in 0755
folders, so every worker user reads it and none writes it. Workers leave requests in their
build folders; kbench builds them one at a time (a lock: several evaluations' helpers) and
keeps the newest few. Standard library only: host_pch.py also runs inside the compile worker.
"""

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

MARKER = "entry.json"


def build_header(root, key, compiler, flags, header, text, timeout=600):
    """Builds `<root>/<key>/<header>.gch` from `text`, written as `<header>`, with `compiler
    flags -x c++-header`, unless the entry exists. The caller has checked the compiler and the
    flags. Returns a sentence saying what happened."""
    final = Path(root) / key
    if (final / MARKER).is_file():
        return f"{key[:12]}: built already"
    work = Path(tempfile.mkdtemp(prefix=f".tmp-{key[:12]}-", dir=root))
    try:
        path = work / header
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        command = [compiler, *[f for f in flags if f != "-c"], "-x", "c++-header", str(path),
                   "-o", f"{path}.gch"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=work)
        if done.returncode != 0:
            return f"{key[:12]}: the header did not build: {done.stderr.strip()[-400:]}"
        seconds = round(time.perf_counter() - start, 1)
        (work / MARKER).write_text(json.dumps({"compiler": compiler, "flags": flags, "seconds": seconds}))
        publish(work, final)
        return f"{key[:12]}: built in {seconds:.1f} s"
    except subprocess.TimeoutExpired:
        return f"{key[:12]}: the header ran past {timeout} s"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def publish(work, final, marker=MARKER):
    """Makes the entry built in `work` readable by every worker user and writable by none, and
    renames it to `final`; another builder's entry there already is as good."""
    for part in [work, *work.rglob("*")]:
        part.chmod(0o755 if part.is_dir() else 0o644)
    try:
        work.rename(final)
    except OSError:
        if not (final / marker).is_file():  # not another builder's entry: a real error
            raise


def evict_oldest(root, keep, marker=MARKER):
    """Removes all but the `keep` newest entries of `root` (folders holding `marker`, which dates
    them)."""
    entries = sorted((p for p in Path(root).iterdir() if (p / marker).is_file()),
                     key=lambda p: (p / marker).stat().st_mtime)
    while len(entries) > keep:
        old = entries.pop(0)
        gone = old.with_name(f".old-{old.name}")
        old.rename(gone)  # a compiler that has the .gch open keeps reading it
        shutil.rmtree(gone, ignore_errors=True)


def build_requests(root, folders, requests, build_entry, keep):
    """Builds every request (`<folder>/**/<requests>/<key>/`) with `build_entry(root, request)`,
    one at a time, removes the requests, then keeps the `keep` newest entries. Returns the
    sentences."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    said = []
    with open(root / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for folder in folders:
            for request in sorted(Path(folder).glob(f"**/{requests}/*")):
                if request.is_dir():
                    said.append(build_entry(root, request))
                    shutil.rmtree(request, ignore_errors=True)
        evict_oldest(root, keep)
    return said


def max_entries(variable, default=4):
    """The whole number of entries `variable` asks to keep (at least 1), or `default` unset."""
    text = os.environ.get(variable, "") or str(default)
    if not text.isdigit() or int(text) < 1:
        raise RuntimeError(f"{variable}={text!r} is not a whole number of at least 1; set it to how "
                           f"many precompiled headers to keep (default {default})")
    return int(text)
