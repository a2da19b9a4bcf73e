"""Precompiled headers of torch/extension.h for load_inline's binding translation unit.

A load_inline extension's main.cpp starts with `#include <torch/extension.h>`; parsing it is
most of that unit's build (18 s of its 27 are parsing and 6 more instantiating on the development
machine: docs/architecture.md, "load_inline build time"). GCC can load the parsed header from a `.gch` instead, and a `.gch` is valid only
for the flags it was built with, so one is kept per distinct set of main.cpp flags (torch's
flags with the extension's name left out: that macro appears nowhere in the header).

Trust: this module is run by kbench itself (`python -m kbench.pch`), never inside a worker,
before the compile worker starts, and only ever reads the candidate's source (an AST, nothing
executed). The entries it writes under `<cache>/pch` are read-only to every worker: a candidate
cannot leave a poisoned header for the next one. The workers' side is worker/pch_patch.py: it
uses an entry only when its recorded flags equal the build's flags exactly.

Layout: `<root>/<key>/torch/extension.h` (a copy, so a rejected `.gch` falls back to the same
header), `<root>/<key>/torch/extension.h.gch`, `<root>/<key>/flags.json`; `key` is
`entry_key(torch version, compiler, flags)`. Each entry is built in a temporary directory and
renamed into place.
"""

import argparse
import ast
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NAME_FLAG = "-DTORCH_EXTENSION_NAME="
# Extra flags a candidate may ask a PCH for: they reach a compiler run outside the sandbox, so
# only options that cannot name a file, a plugin or a spec (no -include, -fplugin, -specs, -B).
ALLOWED_EXTRA = re.compile(
    r"-(O[0-3sg]?|g[0-3]?|w|DNDEBUG|D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.]*)?|U[A-Za-z_][A-Za-z0-9_]*"
    r"|std=(c|gnu)\+\+(1[147]|2[0-6a-z])|W[a-z][a-z0-9=-]*|march=native|mtune=native"
    r"|f(no-)?(fast-math|openmp|strict-aliasing|exceptions|rtti|omit-frame-pointer))"
)


def max_entries():
    """KBENCH_PCH_MAX_ENTRIES (default 4): entries kept, each about 750 MB for torch 2.11; the
    oldest go first."""
    text = os.environ.get("KBENCH_PCH_MAX_ENTRIES", "4")
    if not text.isdigit() or int(text) < 1:
        raise RuntimeError(f"KBENCH_PCH_MAX_ENTRIES={text!r} is not a whole number of at least 1; "
                           "set it to how many precompiled headers <cache>/pch may keep (default 4)")
    return int(text)


def canonical_flags(cflags):
    """main.cpp's flags as an entry records them: stripped as _write_ninja_file strips them,
    without the extension's name, and without a PCH directory kbench itself added."""
    return [f.strip() for f in cflags if f and not f.strip().startswith(NAME_FLAG)]


def compiler():
    return os.environ.get("CXX", "c++")


def entry_key(torch_version, cxx, flags):
    text = "\n".join([torch_version, cxx, *flags])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def torch_version():
    from kbench.worker.handlers import _torch_version  # reads torch/version.py, no torch import

    return _torch_version()


def load_inline_variants(source):
    """(with_cuda, extra_cflags) of each load_inline call in `source` whose arguments are
    literals kbench may build for; calls with extra include paths or computed flags get none
    (their build runs as without kbench)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    positions = {"cuda_sources": 2, "extra_cflags": 5, "extra_include_paths": 9}
    variants = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name != "load_inline":
            continue
        args = {k: node.args[i] for k, i in positions.items() if i < len(node.args)}
        args.update({kw.arg: kw.value for kw in node.keywords if kw.arg in positions})
        if any(kw.arg is None for kw in node.keywords):
            continue  # **kwargs: not known before it runs
        include = args.get("extra_include_paths")
        if include is not None and not _is_empty(include):
            continue
        extra = _literal_strings(args.get("extra_cflags"))
        if extra is None or not all(ALLOWED_EXTRA.fullmatch(f.strip()) for f in extra):
            continue
        cuda = args.get("cuda_sources")
        with_cuda = cuda is not None and not (isinstance(cuda, ast.Constant) and not cuda.value)
        variant = (with_cuda, tuple(f.strip() for f in extra))
        if variant not in variants:
            variants.append(variant)
    return variants


def _is_empty(node):
    return (isinstance(node, ast.Constant) and node.value is None) or (
        isinstance(node, (ast.List, ast.Tuple)) and not node.elts
    )


def _literal_strings(node):
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return []
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]
    return None


def torch_cflags(with_cuda, extra_cflags):
    """The cflags torch's own code writes into build.ninja for main.cpp, for this variant."""
    import torch.utils.cpp_extension as ce

    captured = {}
    original = ce._write_ninja_file
    ce._write_ninja_file = lambda **kw: captured.update(kw)
    try:
        sources = ["main.cpp"] + (["cuda.cu"] if with_cuda else [])
        ce._write_ninja_file_to_build_library(
            path=os.devnull, name="kbench_pch", sources=sources, extra_cflags=list(extra_cflags),
            extra_cuda_cflags=[], extra_sycl_cflags=[], extra_ldflags=[], extra_include_paths=[],
            with_cuda=with_cuda, with_sycl=False, is_standalone=False)
    finally:
        ce._write_ninja_file = original
    return canonical_flags(captured["cflags"])


def build_entry(root, flags, cxx, version):
    """Builds the entry for `flags` unless it exists; returns its directory."""
    key = entry_key(version, cxx, flags)
    final = root / key
    if (final / "flags.json").is_file():
        return final
    import torch.utils.cpp_extension as ce

    header = Path(ce._TORCH_PATH) / "include" / "torch" / "extension.h"
    work = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=root))
    try:
        (work / "torch").mkdir()
        shutil.copyfile(header, work / "torch" / "extension.h")
        command = [cxx, *shlex.split(" ".join(flags)), "-x", "c++-header",
                   str(work / "torch" / "extension.h"), "-o", str(work / "torch" / "extension.h.gch")]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"building the PCH failed ({shlex.join(command)}):\n{done.stderr[-4000:]}")
        (work / "flags.json").write_text(json.dumps({"cxx": cxx, "torch": version, "flags": flags}))
        for path in [work, work / "torch", *work.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # every worker user reads, none writes
        try:
            work.rename(final)
        except OSError:
            if not (final / "flags.json").is_file():  # not another builder's entry: a real error
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


def evict_oldest(root, keep, marker="flags.json"):
    """Removes all but the `keep` newest entries of `root` (folders holding `marker`, which dates
    them); the host compile's headers (host_pch.py) are kept the same way."""
    entries = sorted((p for p in Path(root).iterdir() if (p / marker).is_file()),
                     key=lambda p: (p / marker).stat().st_mtime)
    while len(entries) > keep:
        old = entries.pop(0)
        gone = old.with_name(f".old-{old.name}")
        old.rename(gone)  # a compiler that has the .gch open keeps reading it
        shutil.rmtree(gone, ignore_errors=True)


def ensure(root, candidate):
    """Builds the entries the candidate's load_inline calls would use. Quick when they exist:
    a variant's marker names its entry, so torch is imported only to build."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    variants = load_inline_variants(Path(candidate).read_text(encoding="utf-8", errors="replace"))
    version, cxx = torch_version(), compiler()
    markers = root / "variants"
    markers.mkdir(exist_ok=True)
    markers.chmod(0o755)
    import fcntl

    lock = open(root / ".lock", "a")  # one builder at a time (a suite's --jobs builds)
    fcntl.flock(lock, fcntl.LOCK_EX)
    built = []
    for with_cuda, extra in variants:
        settings = [version, cxx, sys.executable, os.environ.get("CUDA_HOME", ""), str(with_cuda), *extra]
        marker = markers / hashlib.sha256("\n".join(settings).encode()).hexdigest()[:32]
        entry = root / marker.read_text().strip() if marker.is_file() else None
        if entry is None or not (entry / "flags.json").is_file():
            keep = max_entries()
            if len([p for p in root.iterdir() if (p / "flags.json").is_file()]) >= keep:
                evict_oldest(root, keep - 1)
            entry = build_entry(root, torch_cflags(with_cuda, extra), cxx, version)
            marker.write_text(entry.name)
            marker.chmod(0o644)
        built.append(str(entry))
    lock.close()
    return built


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the PCH cache, <cache>/pch")
    parser.add_argument("--candidate", required=True, help="the candidate's Python file")
    args = parser.parse_args(argv)
    try:
        for entry in ensure(args.root, args.candidate):
            print(entry)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        print(f"kbench.pch: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
