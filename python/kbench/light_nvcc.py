"""nvcc for load_inline's CUDA unit, with torch/types.h in place of torch/extension.h.

A load_inline candidate's `cuda.cu` starts with `#include <torch/extension.h>`: all of torch's
C++ API plus pybind11 and Python's headers, of which a kernel's host wrapper uses the Tensor
type and a few factory functions, all in `torch/types.h`. nvcc parses the unit three times
(cudafe++, cicc, then the host compiler on cudafe++'s output), so the header is most of a cold
build: 59 s of the H200's 60 s for examples/cuda/level1_relu.py, and on the development
machine 115 s against 49 s with torch/types.h (docs/architecture.md, "load_inline build time").

This script is what torch's build.ninja runs as `$nvcc` (`install()`, called in the compile and
candidate workers by worker/loading.py, sets PYTORCH_NVCC, torch's own hook for a wrapper). For a
`-c SRC.cu` whose source includes torch/extension.h (or torch/torch.h) and names nothing that only that header
declares, it compiles a copy of SRC with the include swapped (`<build>/kbench-light/`, the same
file name, the original folder searched for quoted includes as before); if that copy does not
compile, it compiles SRC as written. Either way the object is what the candidate's source
means: a unit that compiles against the smaller header declares nothing differently (the
headers it drops declare other names). What happened is written beside the object
(`OBJECT.kbench-header`), for the compile answer. Every other command (the device link) and
every unit that does not qualify goes to nvcc unchanged.

Every `-c` of a `.cu` goes through nvcc_steps.py beside this file, which runs nvcc's host and
device front ends side by side; its note joins the header's in `OBJECT.kbench-header`.

As `$nvcc` it runs inside the sandboxed compile worker, with the standard library only.
KBENCH_CUDA_HEADER=off turns the swap off (KBENCH_NVCC_STEPS=off the side-by-side steps).
"""

import os
import re
import sys
from pathlib import Path

# Run as a script with -I, which leaves this file's folder off sys.path: kbench's own folder,
# which the workers read and cannot write.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import aten_subset  # noqa: E402
import nvcc_steps  # noqa: E402
import split_build  # noqa: E402
from light_copy import ALL_H_NAMES, TORCH_INCLUDE, first_error, record, subset_header_note, write_copy  # noqa: E402

# Beyond all.h's names, the CUDA unit's smaller header lacks pybind11 and torch's Python glue.
_NEEDS_FULL = re.compile(
    rf"\b({ALL_H_NAMES}|PYBIND11_\w+|pybind11|py::|THP\w+|Py[A-Z]\w+|torch::python\b)"
)
SWAPPED = "torch/types.h in place of torch/extension.h"


def install():
    """Makes this script load_inline's `$nvcc`, through PYTORCH_NVCC, torch's hook for an nvcc
    wrapper. Run in the compile and the candidate worker alike, before the candidate: the
    command must read the same in both, or ninja would rebuild in the second."""
    import shlex

    from torch.utils import cpp_extension

    if cpp_extension.CUDA_HOME is None or "PYTORCH_NVCC" in os.environ:
        return
    nvcc = os.path.join(cpp_extension.CUDA_HOME, "bin", "nvcc")
    command = (sys.executable, "-I", "-S", str(Path(__file__).resolve()), nvcc)
    os.environ["PYTORCH_NVCC"] = " ".join(shlex.quote(part) for part in command)


def plan(args):
    """(source, object) of a `-c SOURCE.cu -o OBJECT` compile, or None for anything else."""
    try:
        source = args[args.index("-c") + 1]
        target = args[args.index("-o") + 1]
    except (ValueError, IndexError):
        return None
    return (source, target) if source.endswith(".cu") else None


def light_text(text):
    """The source with torch/extension.h swapped, or None when it does not qualify."""
    if not TORCH_INCLUDE.search(text) or _NEEDS_FULL.search(text):
        return None
    return TORCH_INCLUDE.sub("#include <torch/types.h>", text)


def _compile(nvcc, args, target, note):
    """Builds through nvcc_steps, records `note` (and how the steps ran) for the unit, passes
    nvcc's output on and returns its exit code."""
    returncode, output, steps = nvcc_steps.compile_unit(nvcc, args)
    sys.stdout.write(output)
    record(target + ".kbench-header", note + (f"; {steps}" if steps and returncode == 0 else ""))
    return returncode


def main(argv):
    nvcc, args = argv[1], argv[2:]
    planned = plan(args)
    if planned is None:
        os.execv(nvcc, [nvcc, *args])
    source, target = planned
    if os.environ.get("KBENCH_CUDA_HEADER", "on") == "off":
        return _compile(nvcc, args, target, "as written: KBENCH_CUDA_HEADER=off")
    text = Path(source).read_text(encoding="utf-8", errors="surrogateescape")
    not_split = "KBENCH_CUDA_SPLIT=off"
    if os.environ.get("KBENCH_CUDA_SPLIT", "on") != "off":
        returncode, output, not_split, subset_note = split_build.build(nvcc, args, source, target, text, light_text)
        if returncode == 0:
            sys.stdout.write(output)
            record(target + ".kbench-header", not_split)
            record(target + ".kbench-aten", subset_note)
            return 0
    not_split = "; not split: " + not_split
    light = light_text(text)
    if light is None:
        return _compile(nvcc, args, target, "as written: " + (
            "it names what only torch/extension.h declares" if TORCH_INCLUDE.search(text) else "no torch/extension.h")
            + not_split)
    subset_flags, subset_text, subset_note = aten_subset.plan(light, source, args, "#include <torch/types.h>")
    copy = write_copy(source, target, subset_text or light)
    at = args.index(source)
    # Quoted includes were looked up beside SOURCE first; the copy's folder holds nothing else,
    # so SOURCE's folder first among the -I folders finds what it found.
    swapped = ["-I", str(Path(source).parent), *(subset_flags or []), *args[:at], str(copy), *args[at + 1:]]
    returncode, output, steps = nvcc_steps.compile_unit(nvcc, swapped)
    if returncode == 0:
        sys.stdout.write(output)
        record(target + ".kbench-header", SWAPPED + (f"; {steps}" if steps else "") + not_split)
        record(target + ".kbench-aten", subset_header_note(subset_flags, subset_note))
        return 0
    return _compile(nvcc, args, target,
                    "as written: with torch/types.h it did not compile (" + first_error(output) + ")" + not_split)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
