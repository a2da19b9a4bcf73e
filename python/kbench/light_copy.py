"""What light_nvcc.py and light_cxx.py share: the unit's copy with a smaller torch header, written
so ninja finds the unit up to date afterwards, and the note left beside the object.

Both run as build.ninja's compiler, inside the sandboxed compile worker, with the standard
library only."""

import os
import re
from pathlib import Path

# torch/torch.h is torch/all.h, and torch/extension.h where TORCH_API_INCLUDE_EXTENSION_H is
# defined, as it is for every load_inline unit.
TORCH_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/(extension|torch)\.h[>"]', re.M)
# Names that torch/all.h brings beyond torch/types.h: a source that uses one would fail against
# a smaller header, so it is built as written at once rather than after a failed try.
ALL_H_NAMES = (
    r"TORCH_LIBRARY\w*"
    r"|torch::(nn|autograd|jit|optim|data|fft|linalg|special|nested|cuda|serialize"
    r"|NoGradGuard|AutoGradMode|InferenceMode|manual_seed|enumtype|xpu|mps)\b"
)


def write_copy(source, target, text, name=None):
    """Writes `text` as `<target's folder>/kbench-light/<name, or source's name>` and returns its
    path."""
    copy = Path(target).parent / "kbench-light" / (name or Path(source).name)
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


def subset_header_note(flags, note):
    """What the note beside the object says of ATen/Functions.h (aten_subset.py)."""
    return note if flags else "torch's ATen/Functions.h: kbench's not used: " + note
