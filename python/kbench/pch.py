"""Precompiled torch/extension.h for load_inline's binding unit: asked for by the build, built by
kbench in the background, used by later builds with the same flags.

A load_inline extension's main.cpp starts with `#include <torch/extension.h>`; parsing it is
most of that unit's build (docs/architecture.md, "load_inline build time"). GCC loads a parsed
header from a `.gch` found beside the header instead, and a `.gch` is valid only for the flags
it was built with, so there is one entry per compiler, flag set and torch install: the key is a
sha256 of the compiler's path, main.cpp's flags (less the dependency file, the source, the
object and the extension's name, which the header never uses), and the text of the
torch/extension.h those flags find and of the `version.py` beside its include folder.

- In the worker, light_cxx.py (build.ninja's `$cxx`) looks the entry up: when it exists, the
  unit is compiled as written with `-isystem <entry> -Winvalid-pch` put first, so GCC finds
  `<entry>/torch/extension.h.gch` (should it reject it, it reads the copy of the header beside
  it, the same text). build.ninja is not changed, so ninja never rebuilds because an entry
  appeared. Without an entry, the unit builds as before (light_cxx.py's smaller headers) and a
  request is left in the extension's build folder: the compiler and the flags.
- kbench, outside every worker, builds the requests after the compile
  (`python -m kbench.pch build`): the compiler must be a GCC in a system folder, the flags on
  host_pch.py's short list (include folders no worker can write, nothing that names another
  file), and the header the one those folders hold; the key is recomputed from what kbench
  finds itself. Workers read the entries and cannot write them.

Layout: `<root>/<key>/torch/extension.h`, `.../extension.h.gch`, `<root>/<key>/entry.json`;
about 750 MB each for torch 2.11; KBENCH_PCH_MAX_ENTRIES (default 4) are kept.
"""

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

try:
    from . import header_entries, host_pch
except ImportError:  # imported by light_cxx.py, a script beside it, without kbench's package
    import header_entries
    import host_pch

NAME_FLAG = "-DTORCH_EXTENSION_NAME="
REQUESTS = "kbench-pch"
HEADER = Path("torch") / "extension.h"
_UNIT_OPTIONS = ("-MF", "-MT", "-MQ", "-c", "-o")  # each names this unit's files, with a value


def binding_flags(args):
    """main.cpp's compile arguments (`-MMD -MF D $cflags -c SRC -o OBJ $post_cflags`, split) less
    what names this unit: the flags a `.gch` must be built with."""
    flags, i = [], 0
    while i < len(args):
        if args[i] in _UNIT_OPTIONS:
            i += 2
            continue
        if args[i] not in ("-MMD", "-MD") and not args[i].startswith(NAME_FLAG):
            flags.append(args[i])
        i += 1
    return flags


def header_folder(flags):
    """The include folder GCC finds `<torch/extension.h>` in with these flags (the -I folders,
    then the -isystem ones, in order), or None."""
    quoted, system, i = [], [], 0
    while i < len(flags):
        flag = flags[i]
        for option, into in (("-isystem", system), ("-I", quoted)):
            if flag == option and i + 1 < len(flags):
                into.append(flags[i + 1])
                i += 1
                break
            if flag.startswith(option) and len(flag) > len(option):
                into.append(flag[len(option):])
                break
        i += 1
    for folder in quoted + system:
        if (Path(folder) / HEADER).is_file():
            return Path(folder)
    return None


def entry_key(compiler, flags, folder):
    digest = hashlib.sha256()
    version = Path(folder).parent / "version.py"  # <torch>/include -> <torch>/version.py
    texts = [(Path(folder) / HEADER).read_bytes(), version.read_bytes() if version.is_file() else b""]
    for part in (compiler.encode(), "\0".join(flags).encode("utf-8", "surrogateescape"), *texts):
        digest.update(part + b"\0\1")
    return digest.hexdigest()


def lookup(root, compiler, flags):
    """Worker side, for a unit compiled by `compiler` (its real path) with `flags`: (entry, key,
    why not). `entry` is the folder to put first among the system includes, or None; `key` is
    None where no entry could serve these flags."""
    if problem := host_pch.compiler_problem(compiler) or host_pch.flags_problem(flags):
        return None, None, problem
    folder = header_folder(flags)
    if folder is None:
        return None, None, "torch/extension.h is in none of the unit's include folders"
    key = entry_key(compiler, flags, folder)
    entry = Path(root) / key
    if (entry / header_entries.MARKER).is_file() and (entry / f"{HEADER}.gch").is_file():
        return entry, key, ""
    return None, key, "none built yet for these flags (asked for)"


def request(build_dir, compiler, flags, key):
    """Worker side: leaves a request for the entry `key` in the extension's build folder."""
    folder = Path(build_dir) / REQUESTS / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "request.json").write_text(json.dumps({"compiler": compiler, "flags": flags}))
    except OSError:
        pass


def build_entry(root, request_dir, timeout=600):
    """kbench's side: builds the entry `request_dir` asks for, after checking it. Returns a
    sentence saying what happened."""
    request_dir = Path(request_dir)
    try:
        asked = json.loads((request_dir / "request.json").read_text())
        compiler, flags = str(asked["compiler"]), [str(f) for f in asked["flags"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"{request_dir}: not a request ({error})"
    if problem := host_pch.compiler_problem(compiler) or host_pch.flags_problem(flags):
        return f"{request_dir}: {problem}"
    folder = header_folder(flags)
    if folder is None:
        return f"{request_dir}: torch/extension.h is in none of its include folders"
    text = (folder / HEADER).read_text(encoding="utf-8", errors="surrogateescape")
    return header_entries.build_header(root, entry_key(compiler, flags, folder), compiler, flags,
                                       str(HEADER), text, timeout)


def _remove_old_layout(root):
    """Entries of kbench's earlier layout (flags.json, variants/: built before the compile,
    KBENCH_PCH=on) are never used now; about 750 MB each."""
    for old in [p.parent for p in Path(root).glob("*/flags.json")] + [Path(root) / "variants"]:
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def build_requests(root, folders):
    """Builds every request under `folders` (extension build folders), then removes the
    requests. Returns the sentences."""
    _remove_old_layout(root)
    return header_entries.build_requests(root, folders, REQUESTS, build_entry,
                                         header_entries.max_entries("KBENCH_PCH_MAX_ENTRIES"))


def main(argv=None):
    parser = argparse.ArgumentParser(description="builds the binding unit's headers workers asked for")
    parser.add_argument("command", choices=["build"])
    parser.add_argument("--root", required=True, help="the PCH cache, <cache>/pch")
    parser.add_argument("folders", nargs="+", help="extension build folders holding requests")
    args = parser.parse_args(argv)
    try:
        for line in build_requests(args.root, args.folders):
            print(line)
    except (OSError, RuntimeError) as exc:
        print(f"kbench.pch: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
