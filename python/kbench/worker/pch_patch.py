"""Points load_inline's binding unit at kbench's precompiled torch/extension.h (kbench/pch.py).

Installed by trusted code before the candidate runs, in the compile worker and the candidate
worker alike (the same build.ninja in both, so the candidate worker's load_inline finds the
compile worker's build up to date). It wraps torch's `_write_ninja_file`: when main.cpp's
flags, less the extension's name, equal an entry's recorded flags exactly, the entry's
directory goes first among the system include directories, so GCC finds
`torch/extension.h.gch` there (or, should it reject it, the same header beside it). Nothing
else in the build changes: the CUDA unit, the link and the flags' order stay torch's.
`-Winvalid-pch` makes a rejected header visible in the build log.

KBENCH_PCH_DIR (set by kbench, `<cache>/pch`) turns it on; kbench leaves it unset under
KBENCH_PCH=off or when the workers could write the cache.
"""

import json
import os
import shlex
from pathlib import Path

# What the last build used: the entry's directory, or why none (for the compile answer).
state = {"entry": None, "reason": "no load_inline build ran"}


def _entries(root):
    found = {}
    for flags_file in Path(root).glob("*/flags.json"):
        try:
            recorded = json.loads(flags_file.read_text())
        except (OSError, ValueError):
            continue
        found[(recorded.get("cxx"), tuple(recorded.get("flags", ())))] = flags_file.parent
    return found


def with_pch(cflags, root):
    """`cflags` with the matching entry's directory first among the system includes, or
    unchanged when no entry matches."""
    from kbench.pch import canonical_flags, compiler

    flags = canonical_flags(cflags or [])
    entry = _entries(root).get((compiler(), tuple(flags)))
    if entry is None or not (entry / "torch" / "extension.h.gch").is_file():
        state.update(entry=None, reason="no precompiled header for these flags")
        return cflags
    state.update(entry=str(entry), reason="")
    out = [f.strip() for f in cflags]
    at = next((i for i, f in enumerate(out) if f.startswith("-isystem")), len(out))
    return out[:at] + [f"-isystem {shlex.quote(str(entry))}", "-Winvalid-pch"] + out[at:]


def install(root=None):
    root = root if root is not None else os.environ.get("KBENCH_PCH_DIR", "")
    if not root:
        state["reason"] = "off (KBENCH_PCH=on turns it on)"
        return False
    import torch.utils.cpp_extension as ce

    original = ce._write_ninja_file
    if getattr(original, "_kbench_pch", False):
        return True

    def write_ninja_file(*args, **kwargs):
        if "cflags" in kwargs and not kwargs.get("sycl_cflags"):
            kwargs["cflags"] = with_pch(kwargs["cflags"], root)
        return original(*args, **kwargs)

    write_ninja_file._kbench_pch = True
    ce._write_ninja_file = write_ninja_file
    state["reason"] = "no load_inline build ran"
    return True
