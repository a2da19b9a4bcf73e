"""ATen/Functions.h with only the operators a load_inline unit can name.

torch/types.h, the smaller header light_nvcc.py and light_cxx.py build against, includes
ATen/Functions.h, which includes the header of every one of ATen's 1335 operators (`at::add`,
`at::zeros_like`, ...). Few of them are named by a unit or by the torch headers it reads, and
parsing the rest is about a third of cudafe++'s work on a small kernel (docs/architecture.md,
"load_inline build time"). So kbench keeps, per torch install, a copy of ATen/Functions.h that
includes only the operator headers torch's own headers use (`<root>/<key>/ATen/Functions.h`,
found first on the include path), and the unit itself includes, after its torch header, those of
the operators it names beyond them.

Why the unit means the same: an operator's header declares only names that start with the
operator's (`add`, `add_out`, `add_outf`, `add_symint`, ...; checked for every header when the
entry is built: a header that declares others is always kept). A name a unit's code can call is
a token of its text, and every operator one of its tokens could name is kept (the token itself
and each of its `_`-separated prefixes). torch's headers are read once, when the entry is built,
for the operators they use: a name after `at::` or `torch::`, or called unqualified and not
declared (not after a type name), not a member (`.`, `->`, `Tensor::`) and not `at::_ops::`'s
structs. Operators nobody names are left out, which changes no lookup that finds anything; an
operator named in a way that counting misses is undeclared, the unit does not compile, and the
wrapper compiles it as written. A unit that includes a torch header the entry's reading did not
cover is compiled with torch's own ATen/Functions.h.

The entry is built by kbench, outside every worker (`python -m kbench.aten_subset build --root
ROOT`, before the first compile worker starts), from the torch install the worker interpreter
imports, and only from include folders no worker can write; workers read it. Standard library
only: light_nvcc.py and light_cxx.py import this beside them inside the compile worker.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

try:
    from . import header_entries, host_pch
except ImportError:  # imported by light_nvcc.py and light_cxx.py, scripts beside it
    import header_entries
    import host_pch

MARKER = "entry.json"

# The torch headers read when the entry is built, besides everything they include: the smaller
# headers and the CUDA helpers kernels include beside them.
SEEDS = (
    "torch/types.h", "torch/python.h", "ATen/ATen.h", "ATen/cuda/CUDAContext.h",
    "ATen/cuda/Exceptions.h", "c10/cuda/CUDAGuard.h", "c10/cuda/CUDAStream.h",
    "ATen/cuda/CUDAEvent.h", "c10/cuda/CUDAException.h",
)
# Bumped when the reading changes: part of the key, so an old entry is not used.
VERSION = "1"
_API = "torch/csrc/api/include"
_OP_INCLUDE = re.compile(r"^#include <ATen/ops/(\w+)\.h>[ \t]*$", re.M)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_TOKENS = re.compile(r"->|::|[A-Za-z_]\w*|\S")
_IDENT = re.compile(r"[A-Za-z_]\w*")
# Words after which a name is used, not declared.
_KEYWORDS = frozenset(
    "return else do case throw co_return co_yield co_await sizeof decltype typeid noexcept alignof "
    "new delete not and or xor compl bitand bitor not_eq and_eq or_eq xor_eq".split())
# Qualifiers under which a name is not an ATen function: members and at::_ops's structs.
_NOT_FUNCTIONS = frozenset("Tensor TensorBase _ops std c10 native".split())
# What every operator header mentions beside its own names.
_HEADER_WORDS = frozenset(
    "call redispatch TORCH_API if return sizeof defined decltype template typename static_assert".split())


def strip(text):
    """`text` less comments and include lines (whose words name files, not functions)."""
    return _INCLUDE.sub("", _COMMENT.sub(" ", text))


def used_names(text):
    """The names `text` (torch's C++, comments and includes stripped) calls or qualifies with at::
    or torch:: (torch's namespace uses at's)."""
    tokens = _TOKENS.findall(text)
    used = set()
    for i, tok in enumerate(tokens):
        if not (tok[0].isalpha() or tok[0] == "_"):
            continue
        before = tokens[i - 1] if i else ""
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if after == "::" or before in (".", "->"):
            continue
        if before == "::":
            if (tokens[i - 2] if i >= 2 else "") not in _NOT_FUNCTIONS:
                used.add(tok)
            continue
        if (before[:1].isalpha() or before[:1] == "_") and before not in _KEYWORDS:
            continue  # a type before it: declared here
        if after in ("(", "<"):
            used.add(tok)
    return used


def operators_named(words, operators):
    """The operators any of `words` could name: the word or one of its `_`-separated prefixes."""
    named = set()
    for word in words:
        parts = word.split("_")
        for end in range(1, len(parts) + 1):
            prefix = "_".join(parts[:end])
            if prefix in operators:
                named.add(prefix)
    return named


def search_folders(torch_include):
    """Where torch's build looks for its headers, in order: the include folder and the C++ API's."""
    return [Path(torch_include), Path(torch_include) / _API]


def entry_key(torch_include):
    """sha256 of the install's real include folder and the texts the entry follows from."""
    real = Path(os.path.realpath(torch_include))
    version = real.parent / "version.py"
    digest = hashlib.sha256()
    for part in (VERSION.encode(), str(real).encode(), (real / "ATen/Functions.h").read_bytes(),
                 version.read_bytes() if version.is_file() else b""):
        digest.update(part + b"\0\1")
    return digest.hexdigest()


def resolve(name, including, quoted, search):
    """The file `#include` NAME finds: beside `including` first for a quoted name, then in
    `search`, or None."""
    if quoted and including is not None and (including.parent / name).is_file():
        return including.parent / name
    for folder in search:
        if (folder / name).is_file():
            return folder / name
    return None


def _declared(text):
    """The functions `text` (an operator's header, comments stripped) declares or defines."""
    tokens = _TOKENS.findall(text)
    names = set()
    for i, tok in enumerate(tokens[1:-1], 1):
        if (tok[0].isalpha() or tok[0] == "_") and tokens[i + 1] in ("(", "<") \
                and tokens[i - 1] not in ("::", ".", "->") and tok not in _HEADER_WORDS \
                and tok not in _KEYWORDS:
            names.add(tok)
    return names


def droppable_operators(torch_include, listed):
    """The operators of `listed` whose header declares only names that start with theirs."""
    droppable = set()
    for op in listed:
        text = strip((Path(torch_include) / "ATen/ops" / f"{op}.h").read_text(errors="surrogateescape"))
        if all(n == op or n.startswith(op + "_") for n in _declared(text)):
            droppable.add(op)
    return droppable


def analyze(torch_include):
    """Reads torch's headers from SEEDS. Returns (kept operators, droppable operators, the
    headers read as paths relative to `torch_include`, the subset's text)."""
    torch_include = Path(os.path.realpath(torch_include))
    search = search_folders(torch_include)
    functions = (torch_include / "ATen/Functions.h").read_text(errors="surrogateescape")
    operators = droppable_operators(torch_include, _OP_INCLUDE.findall(functions))
    read, used = set(), set()
    pending = [(None, name, False) for name in SEEDS]
    while pending:
        including, name, quoted = pending.pop()
        path = resolve(name, including, quoted, search)
        if path is None:
            continue  # not torch's: CUDA's, Python's, the standard library's
        path = Path(os.path.realpath(path))
        if not path.is_relative_to(torch_include):
            continue
        relative = str(path.relative_to(torch_include))
        if relative in read:
            continue
        read.add(relative)
        raw = path.read_text(errors="surrogateescape")
        if not relative.startswith("ATen/ops/"):  # an operator's header names only its own
            used |= used_names(strip(raw))
        for quote, included in _INCLUDE.findall(raw):
            if relative == "ATen/Functions.h" and included[len("ATen/ops/"):-2] in operators \
                    and included.startswith("ATen/ops/"):
                continue  # the list being cut: a kept operator's header is read as the unit's
            pending.append((path, included, quote == '"'))
    kept = operators_named(used, operators)
    text = _OP_INCLUDE.sub(lambda m: "" if m.group(1) in operators and m.group(1) not in kept else m.group(0),
                           functions)
    return kept, operators, sorted(read), text


def _include_folders(args):
    """The -I and -isystem folders of a compile command, in its order."""
    folders, i = [], 0
    while i < len(args):
        flag = args[i]
        if flag in ("-I", "-isystem") and i + 1 < len(args):
            folders.append(Path(args[i + 1]))
            i += 2
            continue
        if flag.startswith("-isystem") and len(flag) > len("-isystem"):
            folders.append(Path(flag[len("-isystem"):]))
        elif flag.startswith("-I") and len(flag) > 2:
            folders.append(Path(flag[2:]))
        i += 1
    return folders


def torch_include_of(args):
    """torch's include folder among a compile command's, or None."""
    for folder in _include_folders(args):
        if (folder / "ATen/Functions.h").is_file() and (folder / _API).is_dir():
            return folder
    return None


def _system(path):
    return str(path).startswith(("/usr/", "/opt/"))


def _words(text, source, args, torch_include, read):
    """The identifiers of `text` and of the unit's own headers (those it includes from outside
    torch's and the system's folders), or (None, why) for a torch header the entry did not read."""
    folders = [*_include_folders(args)]
    words, seen, pending = set(), set(), [(Path(source), text)]
    torch_real = Path(os.path.realpath(torch_include))
    while pending:
        path, body = pending.pop()
        words |= set(_IDENT.findall(body))
        for quote, name in _INCLUDE.findall(body):
            found = resolve(name, path, quote == '"', folders)
            if found is None:
                continue  # found by the compiler's own folders: CUDA's, the standard library's
            real = Path(os.path.realpath(found))
            if real.is_relative_to(torch_real):
                if str(real.relative_to(torch_real)) not in read:
                    return None, f"it includes {name}, which kbench's reading of torch did not cover"
                continue
            if _system(real) or real in seen:
                continue
            if len(seen) >= 200:
                return None, "it includes more than 200 headers of its own"
            seen.add(real)
            pending.append((real, real.read_text(errors="surrogateescape")))
    return words, ""


def plan(text, source, args, anchor):
    """Worker side: how to build `text` (a unit's copy, which includes torch/types.h at `anchor`,
    the first text of that include) against kbench's ATen/Functions.h. Returns (flags to put
    first, the text, a note), or (None, None, why not)."""
    root = os.environ.get("KBENCH_ATEN_SUBSET_DIR", "")
    if not root:
        return None, None, "not offered"
    torch_include = torch_include_of(args)
    if torch_include is None:
        return None, None, "no torch include folder among the flags"
    entry = Path(root) / entry_key(torch_include)
    try:
        recorded = json.loads((entry / MARKER).read_text())
        kept, droppable, read = set(recorded["kept"]), set(recorded["droppable"]), set(recorded["read"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None, "none built for this torch install"
    words, why = _words(text, source, args, torch_include, read)
    if words is None:
        return None, None, why
    extras = sorted(operators_named(words, droppable) - kept)
    at = text.find(anchor)
    if at < 0:
        return None, None, "no torch/types.h include"
    end = text.find("\n", at)
    end = len(text) if end < 0 else end + 1
    if extras:
        # After torch's headers, which use none of them; #line keeps the unit's own numbering.
        line = text.count("\n", 0, end) + 1
        added = "".join(f"#include <ATen/ops/{op}.h>\n" for op in extras) + f"#line {line}\n"
        text = text[:end] + added + text[end:]
    note = (f"kbench's ATen/Functions.h: {len(kept) + len(extras)} of {len(droppable)} operators "
            f"({len(extras)} named by the unit)")
    return ["-I", str(entry)], text, note


def build(root, torch_include):
    """kbench's side: builds the entry for `torch_include` unless it exists; keeps the newest
    few. Returns a sentence."""
    torch_include = Path(os.path.realpath(torch_include))
    if problem := host_pch.include_folder_problem(str(torch_include)):
        return f"not built: {problem}"
    key = entry_key(torch_include)
    root = Path(root)
    if (root / key / MARKER).is_file():
        return f"{key[:12]}: built already"
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    start = time.perf_counter()
    kept, droppable, read, text = analyze(torch_include)
    work = Path(tempfile.mkdtemp(prefix=f".tmp-{key[:12]}-", dir=root))
    try:
        (work / "ATen").mkdir()
        (work / "ATen/Functions.h").write_text(text, errors="surrogateescape")
        seconds = round(time.perf_counter() - start, 2)
        (work / MARKER).write_text(json.dumps({
            "torch_include": str(torch_include), "kept": sorted(kept), "droppable": sorted(droppable),
            "read": read, "seconds": seconds}))
        header_entries.publish(work, root / key)
        header_entries.evict_oldest(root, header_entries.max_entries("KBENCH_ATEN_SUBSET_MAX_ENTRIES"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return (f"{key[:12]}: {len(kept)} of {len(droppable)} operators kept, {len(read)} headers read, "
            f"in {seconds:.1f} s")


def installed_torch_include():
    """The include folder of the torch this interpreter would import, found without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "include"
    return folder if (folder / "ATen/Functions.h").is_file() else None


def main(argv=None):
    parser = argparse.ArgumentParser(description="builds kbench's ATen/Functions.h for a torch install")
    parser.add_argument("command", choices=["build"])
    parser.add_argument("--root", required=True)
    parser.add_argument("--torch-include", help="torch's include folder (default: the installed torch's)")
    args = parser.parse_args(argv)
    folder = args.torch_include or installed_torch_include()
    if folder is None:
        print("not built: this interpreter has no torch with C++ headers")
        return 0
    print(build(args.root, folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
