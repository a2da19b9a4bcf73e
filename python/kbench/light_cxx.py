"""c++ for load_inline's binding unit: against kbench's precompiled torch/extension.h, or with
torch/types.h and torch/python.h in place of torch/extension.h.

torch writes a load_inline extension's `main.cpp` as `#include <torch/extension.h>`, the
candidate's `cpp_sources`, and the pybind11 module it generates. torch/extension.h is
torch/all.h (torch's whole C++ API: autograd, nn, optim, jit, serialization, ...) and
torch/python.h (pybind11, Python's headers and torch's type casters). Declarations of the
kernel's functions and their bindings need torch/types.h, which torch/python.h includes, and
torch/python.h itself; parsing torch/all.h is most of the rest of the unit's build: 21.2 s
against 12.1 s for examples/cuda/level1_relu.py's main.cpp on the development machine
(docs/architecture.md, "load_inline build time").

This script is what torch's build.ninja runs as `$cxx` (`install()`, called in the compile and
candidate workers by worker/loading.py, wraps torch's `_write_ninja_file` so that the file names
it). For a `-c SRC.cpp`:

- where kbench offers its precompiled torch/extension.h (KBENCH_PCH_DIR, pch.py) and holds an
  entry for the unit's compiler and flags, SRC is compiled as written with the entry's folder
  first among the system includes: loading the parsed header is faster still than the smaller
  headers below. build.ninja's command stays the same, so ninja never rebuilds because an entry
  appeared. Without an entry the unit asks kbench for one (built after the compile, in the
  background) and goes on:
- where SRC includes torch/extension.h (or torch/torch.h) and names nothing that only
  torch/all.h declares, a copy of SRC with those includes swapped for the two smaller headers is
  compiled (`<build>/kbench-light/`, the same file name, SRC's folder searched first for quoted
  includes, as before); if the copy does not compile, SRC as written is.

Either way the object is what the source means: a unit that compiles against the smaller
headers declares nothing differently (the headers dropped declare other names; torch's own
type casters are all in torch/python.h), and a `.gch` is the same header parsed. What happened
is written beside the object (`OBJECT.kbench-binding`, `OBJECT.kbench-pch`), for the compile
answer. The link and every other command go to the compiler unchanged.

KBENCH_CXX_HEADER=off leaves build.ninja's `$cxx` torch's own.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Run as a script with -I, which leaves this file's folder off sys.path: kbench's own folder,
# which the workers read and cannot write.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import aten_subset  # noqa: E402
import pch  # noqa: E402
from light_copy import ALL_H_NAMES, TORCH_INCLUDE, first_error, record, subset_header_note, write_copy  # noqa: E402

# torch/python.h declares pybind11 and torch's Python glue, so only all.h's names force the
# source as written.
_NEEDS_FULL = re.compile(rf"\b({ALL_H_NAMES})")
SWAPPED = "torch/types.h and torch/python.h in place of torch/extension.h"
# GCC loads a .gch only for an include that comes before the unit's first token, as
# load_inline writes main.cpp.
_PCH_FIRST = re.compile(r'\A\s*#[ \t]*include[ \t]*<torch/extension\.h>')
_SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".C")


def install():
    """Makes this script load_inline's `$cxx`. Run in the compile and the candidate worker alike,
    before the candidate: build.ninja must read the same in both, or ninja would rebuild in the
    second. torch's other uses of the compiler (its ABI and version checks) keep the real one."""
    if os.environ.get("KBENCH_CXX_HEADER", "on") == "off":
        return False
    import shlex

    import torch.utils.cpp_extension as ce

    original = ce._write_ninja_file
    if getattr(original, "_kbench_cxx", False):
        return True
    script = str(Path(__file__).resolve())

    def write_ninja_file(*args, **kwargs):
        real = ce.get_cxx_compiler
        command = " ".join(shlex.quote(part) for part in (sys.executable, "-I", "-S", script, real()))
        ce.get_cxx_compiler = lambda: command
        try:
            return original(*args, **kwargs)
        finally:
            ce.get_cxx_compiler = real

    write_ninja_file._kbench_cxx = True
    ce._write_ninja_file = write_ninja_file
    return True


def plan(args):
    """(source, object) of a `-c SOURCE.cpp -o OBJECT` compile, or None for anything else."""
    try:
        source = args[args.index("-c") + 1]
        target = args[args.index("-o") + 1]
    except (ValueError, IndexError):
        return None
    return (source, target) if source.endswith(_SOURCE_SUFFIXES) else None


def light_text(text):
    """The source with torch/extension.h swapped, or None when it does not qualify."""
    if not TORCH_INCLUDE.search(text) or _NEEDS_FULL.search(text):
        return None
    return TORCH_INCLUDE.sub("#include <torch/types.h>\n#include <torch/python.h>", text)


def _run(cxx, args):
    done = subprocess.run([cxx, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return done.returncode, done.stdout.decode("utf-8", "replace")


def _as_written(cxx, args, target, why):
    record(target + ".kbench-binding", "as written: " + why)
    os.execvp(cxx, [cxx, *args])


def _against_pch(cxx, args, target, text):
    """Compiles the unit as written against kbench's precompiled torch/extension.h where an entry
    serves it, and returns the exit code; otherwise asks for an entry where one could serve it,
    notes why none was used, and returns None."""
    note = target + ".kbench-pch"
    root = os.environ.get("KBENCH_PCH_DIR", "")
    if not root:
        record(note, "not used: not offered (KBENCH_PCH=on offers it)")
        return None
    if not _PCH_FIRST.match(text):
        record(note, "not used: the unit does not start with #include <torch/extension.h>")
        return None
    resolved = shutil.which(cxx)
    if resolved is None:
        return None
    compiler, flags = os.path.realpath(resolved), pch.binding_flags(args)
    entry, key, why = pch.lookup(root, compiler, flags)
    if entry is None:
        if key is not None:
            pch.request(os.getcwd(), compiler, flags, key)  # ninja runs in the build folder
        record(note, "not used: " + why)
        return None
    returncode, output = _run(cxx, ["-isystem", str(entry), "-Winvalid-pch", *args])
    rejected = "-Winvalid-pch" in output
    if rejected and returncode != 0:  # -Werror made GCC's warning fail the unit: build without it
        record(note, "not used: GCC rejected it (" + first_error(output) + ")")
        return None
    sys.stdout.write(output)
    record(note, "not used: GCC rejected it (" + first_error(output) + ")" if rejected else str(entry))
    record(target + ".kbench-binding", "as written: " + (
        "GCC rejected kbench's precompiled torch/extension.h" if rejected
        else "against kbench's precompiled torch/extension.h"))
    return returncode


def main(argv):
    cxx, args = argv[1], argv[2:]
    planned = plan(args)
    if planned is None:
        os.execvp(cxx, [cxx, *args])
    source, target = planned
    text = Path(source).read_text(encoding="utf-8", errors="surrogateescape")
    returncode = _against_pch(cxx, args, target, text)
    if returncode is not None:
        return returncode
    light = light_text(text)
    if light is None:
        _as_written(cxx, args, target, "it names what only torch/extension.h declares"
                    if TORCH_INCLUDE.search(text) else "no torch/extension.h")
    subset_flags, subset_text, subset_note = aten_subset.plan(light, source, args, "#include <torch/python.h>")
    copy = write_copy(source, target, subset_text or light)
    at = args.index(source)
    # Quoted includes were looked up beside SOURCE first; the copy's folder holds nothing else.
    returncode, output = _run(cxx, ["-iquote", str(Path(source).parent), *(subset_flags or []), *args[:at],
                                    str(copy), *args[at + 1:]])
    if returncode == 0:
        sys.stdout.write(output)
        record(target + ".kbench-binding", SWAPPED)
        record(target + ".kbench-aten", subset_header_note(subset_flags, subset_note))
        return 0
    _as_written(cxx, args, target, "with torch/types.h and torch/python.h it did not compile ("
                + first_error(output) + ")")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
