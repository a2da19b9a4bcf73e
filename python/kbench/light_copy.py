"""What light_nvcc.py and light_cxx.py share: the unit's copy with a smaller torch header, written
so ninja finds the unit up to date afterwards, and the note left beside the object.

Both run as build.ninja's compiler, inside the sandboxed compile worker, with the standard
library only."""

import os
from pathlib import Path


def write_copy(source, target, text):
    """Writes `text` as `<target's folder>/kbench-light/<source's name>` and returns its path."""
    copy = Path(target).parent / "kbench-light" / Path(source).name
    copy.parent.mkdir(exist_ok=True)
    copy.write_text(text, encoding="utf-8", errors="surrogateescape")
    # ninja records an output as of its command's start and rebuilds it when an input named in
    # its depfile is newer: the copy, written after that start, takes the source's time, or
    # every later load_inline (the candidate worker's) would build the unit again.
    source_times = os.stat(source)
    os.utime(copy, ns=(source_times.st_atime_ns, source_times.st_mtime_ns))
    return copy


def record(path, line):
    """Leaves `line` in `path`, beside the object, for the compile answer."""
    try:
        Path(path).write_text(line + "\n")
    except OSError:
        pass


def first_error(output):
    for line in output.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return output.strip().splitlines()[-1][:300] if output.strip() else "no output"
