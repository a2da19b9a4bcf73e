"""Precompiled headers for nvcc's host compile: the headers' part of cudafe++'s output.

nvcc's last step compiles `X.cudafe1.cpp`, the host translation unit cudafe++ writes back out
as C++: the headers first (torch's, CUDA's, the standard library's: 13 MB for a unit against
torch/types.h), then the candidate's own code. GCC spends most of that step parsing the headers'
part (78 % for examples/cuda/level1_relu.py), and that part comes out the same, byte for byte,
for every unit with the same includes and flags, but for the module id that names its anonymous
namespaces. So:

- In the worker (nvcc_steps.py, before the host compile), `use_or_request` cuts the unit at the
  first line of the candidate's own source. It looks up `<root>/<key>`, key a sha256 of the
  compiler, its flags and the headers' part with the module id taken out. An entry whose
  `prefix.h` equals that part with the entry's own module id put in is used: the unit is
  rewritten as `#include "<root>/<key>/prefix.h"` and the rest, the unit's module id replaced
  by the entry's in the host unit (the device side keeps its own, and the registration names it
  and the host side share are cicc's), and GCC loads `prefix.h.gch` beside it (or, should it
  reject the header, reads the same text). Without an entry, the worker leaves a request in
  the extension's build folder: the headers' part, the compiler and the flags.
- kbench, outside every worker, builds the requested entries (`python -m kbench.host_pch
  build`), checking each first: the key recomputed from the request's own contents, a compiler
  in a system folder, flags from a short list that names no file but include folders no worker
  can write, and a text whose preprocessor lines are the few cudafe++ writes (line markers, GCC
  diagnostic and visibility pragmas, `#if 0`, CUDA's host_runtime.h include and its guard
  macros). A worker can read the entries and cannot write them.

What changes in the object: the host side's anonymous namespaces are named with the entry's
module id, which units of the same includes share. Their symbols are hidden, so units of
different extensions never meet; units of one extension would, so the header is used only
where the extension has one CUDA unit (its build.ninja says so) and no relocatable device code.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path

try:
    from . import header_entries
except ImportError:  # imported by nvcc_steps.py, a script beside it, without kbench's package
    import header_entries

PLACEHOLDER = "_kbench_module_id_"
REQUESTS = "kbench-host-pch"

_MARKER = re.compile(r'# \d+(?: "[^"\n]*")?(?: [1-4])*')
_ALLOWED_LINES = {
    "#if 0", "#endif", "#pragma GCC diagnostic push", "#pragma GCC diagnostic pop",
    "#pragma GCC visibility push ( default )", "#pragma GCC visibility pop",
    '#include "crt/host_runtime.h"',
    "#if !defined(__CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__)",
    "#define __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__",
    "#define __nv_is_extended_device_lambda_closure_type(X) false",
    "#define __nv_is_extended_host_device_lambda_closure_type(X) false",
    "#define __nv_is_extended_device_lambda_with_preserved_return_type(X) false",
    "#if defined(__nv_is_extended_device_lambda_closure_type) && "
    "defined(__nv_is_extended_host_device_lambda_closure_type)&& "
    "defined(__nv_is_extended_device_lambda_with_preserved_return_type)",
}
_DIAGNOSTIC = re.compile(r'#pragma GCC diagnostic (?:ignored|warning) "-W[A-Za-z0-9+=-]+"')
# Flags kbench passes to its own compiler run: none names a file but the include folders, none
# loads code into GCC or writes beside the output.
_FLAG = re.compile(r"-(?:std=[a-z0-9+]+|[DU][A-Za-z_][A-Za-z0-9_]*(?:=[A-Za-z0-9_.+-]*)?|O[0-3sgz]?|g[0-3]?"
                   r"|m[a-z0-9][a-z0-9=-]*|W(?![lap],)[a-z][A-Za-z0-9+=-]*|w|c|pthread"
                   r"|f(?:PIC|pic|PIE|pie|openmp|exceptions|no-exceptions|rtti|no-rtti|no-strict-aliasing"
                   r"|fast-math|no-fast-math|visibility=(?:default|hidden)|permissive|no-math-errno"
                   r"|unroll-loops|omit-frame-pointer|no-omit-frame-pointer|strict-aliasing))")
_INCLUDE_FLAGS = ("-I", "-isystem")
_COMPILER = re.compile(r"(?:x86_64-linux-gnu-)?(?:gcc|g\+\+|c\+\+)(?:-\d+)?")
_SYSTEM_FOLDERS = ("/usr/bin/", "/usr/local/bin/", "/bin/", "/opt/")


def split(text, source_name):
    """(headers' part, the rest) of a cudafe1.cpp: the cut is the first line marker of the
    candidate's own source after the unit's first line. None when there is no such line."""
    marker = re.compile(r'^# \d+ "' + re.escape(source_name) + r'"', re.M)
    first = marker.search(text, text.find("\n") + 1)
    if first is None or first.start() == 0:
        return None
    return text[: first.start()], text[first.start():]


def token(key):
    """The module id an entry's host side is compiled with."""
    return f"_kbench_{key[:16]}"


def entry_key(compiler, flags, normalized):
    digest = hashlib.sha256()
    for part in (compiler, "\0".join(flags), normalized):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0\1")
    return digest.hexdigest()


def compile_parts(tokens):
    """(compiler, flags, unit) of nvcc's host compile command: the flags less `-o OBJECT` and
    the unit, in their order."""
    flags, unit, i = [], None, 1
    while i < len(tokens):
        if tokens[i] == "-o":
            i += 2
            continue
        if tokens[i].endswith(".cudafe1.cpp"):
            unit = tokens[i]
        else:
            flags.append(tokens[i])
        i += 1
    return tokens[0], flags, unit


def without_own_folder(flags, folder):
    """`flags` less the include of the extension's own folder, which light_nvcc.py puts first so
    that quoted includes resolve beside the source: cudafe++'s output has none left in its
    headers' part but CUDA's `crt/host_runtime.h`, which the entry finds where nvcc's own flags
    say (a folder the worker writes is no place for a shared header to come from)."""
    own = os.path.realpath(folder)
    out, i = [], 0
    while i < len(flags):
        if flags[i] == "-I" and i + 1 < len(flags) and os.path.realpath(flags[i + 1]) == own:
            i += 2
            continue
        if flags[i].startswith("-I") and len(flags[i]) > 2 and os.path.realpath(flags[i][2:]) == own:
            i += 1
            continue
        out.append(flags[i])
        i += 1
    return out


def flags_problem(flags):
    """Why kbench would not run its compiler with these flags, or ""."""
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag in _INCLUDE_FLAGS or flag == "-x":
            if i + 1 >= len(flags):
                return f"{flag} without a value"
            value = flags[i + 1]
            if flag == "-x" and value != "c++":
                return f"-x {value}"
            if flag != "-x" and (problem := include_folder_problem(value, _aten_entry(value))):
                return problem
            i += 2
            continue
        if flag.startswith(_INCLUDE_FLAGS):
            value = flag[len("-isystem"):] if flag.startswith("-isystem") else flag[2:]
            if problem := include_folder_problem(value, _aten_entry(value)):
                return problem
        elif not _FLAG.fullmatch(flag):
            return f"the flag {flag!r} is not on kbench's list"
        i += 1
    return ""


def _aten_entry(folder):
    """Whether `folder` is an entry of kbench's ATen/Functions.h (aten_subset.py), which kbench
    made and no worker can write, wherever kbench's cache is."""
    path = Path(folder)
    try:  # nothing else in it: no crt/host_runtime.h, the one header the host compile looks up
        return (re.fullmatch(r"[0-9a-f]{64}", path.name) is not None
                and sorted(p.name for p in path.iterdir()) == ["ATen", "entry.json"]
                and [p.name for p in (path / "ATen").iterdir()] == ["Functions.h"])
    except OSError:
        return False


def include_folder_problem(folder, temporary_ok=False):
    """Why a header from `folder` could differ between the entry's build and its use (a folder
    some worker could write), or "". `temporary_ok`: a folder under /tmp may do, for kbench's
    own entries in a cache there (still owned by kbench and written by no one else)."""
    path = Path(folder)
    if not path.is_absolute() or not path.is_dir():
        return f"include folder {folder} is not an absolute folder"
    real = Path(os.path.realpath(path))
    for part in [real, *real.parents]:
        info = part.stat()
        if info.st_uid not in (0, os.geteuid()):
            return f"include folder {folder}: {part} belongs to another user"
        if info.st_mode & stat.S_IWOTH and not (part != real and info.st_mode & stat.S_ISVTX):
            return f"include folder {folder}: {part} is writable by everyone"
    temp = [os.path.realpath(p) for p in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev", "/run")]
    if not temporary_ok and any(str(real) == t or str(real).startswith(t + "/") for t in temp):
        return f"include folder {folder} is under a temporary folder"
    return ""


def compiler_problem(compiler):
    """Why kbench would not run `compiler` (a request's, as a worker resolved it), or "": it must
    be a GCC in a system folder, named by its real path."""
    real = os.path.realpath(compiler)
    if (real != compiler or not real.startswith(_SYSTEM_FOLDERS) or not os.access(real, os.X_OK)
            or not _COMPILER.fullmatch(os.path.basename(real))):
        return f"compiler {compiler} is not a system compiler"
    return ""


def text_problem(text):
    """Why the text might make GCC read or do more than compile it, or "": every preprocessor
    line must be one cudafe++ writes."""
    for banned, what in (("\\\n", "a line continuation"), ("\r", "a carriage return"), ("/*", "a comment"),
                         ("%:", "a digraph"), ("??", "a trigraph"), ("_Pragma", "_Pragma"), ("\0", "a NUL")):
        if banned in text:
            return f"the text holds {what}"
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            if re.search(r"\\\s*$", line):
                return "the text holds a line continuation"
            continue
        if not (_MARKER.fullmatch(stripped) or stripped in _ALLOWED_LINES or _DIAGNOSTIC.fullmatch(stripped)):
            return f"a preprocessor line kbench does not know: {stripped[:120]}"
    return ""


def _one_cuda_unit(build_dir):
    """Whether the build.ninja in `build_dir` (the extension's, where ninja runs nvcc) builds
    exactly one CUDA unit."""
    try:
        text = (Path(build_dir) / "build.ninja").read_text(errors="replace")
    except OSError:
        return False
    return len(re.findall(r"^build [^\n]*: cuda_compile ", text, re.M)) == 1


def use_or_request(tokens, module_id, source_name, root, args, search_path):
    """Worker side, before nvcc's host compile `tokens`: rewrites the unit to use an entry, or
    leaves a request for one. Returns (note, undo): `undo()` puts the unit back as cudafe++
    wrote it (for a retry without the header)."""
    nothing = ("", lambda: None)
    if not root or any(a in ("-rdc=true", "-dc", "--device-c", "--relocatable-device-code=true",
                             "-rdc") for a in args) or not _one_cuda_unit(os.getcwd()):
        return nothing
    compiler, flags, unit = compile_parts(tokens)
    flags = without_own_folder(flags, os.getcwd())
    resolved = shutil.which(compiler, path=search_path)
    if unit is None or resolved is None:
        return nothing
    resolved = os.path.realpath(resolved)
    original = Path(unit).read_text(encoding="utf-8", errors="surrogateescape")
    parts = split(original, source_name)
    if parts is None or PLACEHOLDER in original:
        return nothing
    prefix, rest = parts
    normalized = prefix.replace(module_id, PLACEHOLDER)
    key = entry_key(resolved, flags, normalized)
    entry = Path(root) / key
    expected = normalized.replace(PLACEHOLDER, token(key))
    try:
        found = (entry / "prefix.h").read_text(encoding="utf-8", errors="surrogateescape")
        usable = found == expected and (entry / "prefix.h.gch").is_file()
    except OSError:
        usable = False
    if usable:
        Path(unit).write_text(f'#include "{entry / "prefix.h"}"\n' + rest.replace(module_id, token(key)),
                              encoding="utf-8", errors="surrogateescape")
        restore = lambda: Path(unit).write_text(original, encoding="utf-8", errors="surrogateescape")  # noqa: E731
        return f"the host compile against kbench's precompiled header {key[:12]}", restore
    if text_problem(normalized) or flags_problem(flags):
        return nothing
    request = Path(os.getcwd()) / REQUESTS / key
    try:
        request.mkdir(parents=True, exist_ok=True)
        (request / "prefix.h").write_text(normalized, encoding="utf-8", errors="surrogateescape")
        (request / "request.json").write_text(json.dumps({"compiler": resolved, "flags": flags, "key": key}))
    except OSError:
        return nothing
    return "", lambda: None


def build_entry(root, request_dir, timeout=600):
    """kbench's side: builds the entry `request_dir` asks for, after checking it. Returns a
    sentence saying what happened."""
    request_dir = Path(request_dir)
    try:
        asked = json.loads((request_dir / "request.json").read_text())
        normalized = (request_dir / "prefix.h").read_text(encoding="utf-8", errors="surrogateescape")
        compiler, flags = asked["compiler"], [str(f) for f in asked["flags"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"{request_dir}: not a request ({error})"
    key = entry_key(compiler, flags, normalized)
    if key != asked.get("key") or request_dir.name != key:
        return f"{request_dir}: its key is not its contents'"
    if problem := compiler_problem(compiler):
        return f"{request_dir}: {problem}"
    if problem := flags_problem(flags) or text_problem(normalized):
        return f"{request_dir}: {problem}"
    return header_entries.build_header(root, key, compiler, flags, "prefix.h",
                                       normalized.replace(PLACEHOLDER, token(key)), timeout)


def build_requests(root, folders):
    """Builds every request under `folders` (extension build folders), then removes the
    requests. Returns the sentences."""
    return header_entries.build_requests(root, folders, REQUESTS, build_entry,
                                         header_entries.max_entries("KBENCH_HOST_PCH_MAX_ENTRIES"))


def main(argv=None):
    parser = argparse.ArgumentParser(description="builds the host-compile headers workers asked for")
    parser.add_argument("command", choices=["build"])
    parser.add_argument("--root", required=True)
    parser.add_argument("folders", nargs="+")
    args = parser.parse_args(argv)
    for line in build_requests(args.root, args.folders):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
