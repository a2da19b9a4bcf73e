"""The rule against work outside the timed call: threads, processes, network and file access
(exploits 7, 10, 11). docs/static-checks.md has the table.
"""

import ast
import re

from ..static_analysis import string_line
from ._common import imported_modules

# ---------------------------------------------------------------- concurrency and I/O

_BANNED_MODULES = {
    "threading", "_thread", "multiprocessing", "concurrent", "subprocess", "socket", "urllib",
    "http", "requests", "asyncio", "shutil", "mmap", "pty", "torch.multiprocessing", "signal",
}
_BANNED_CALLS = {
    "open", "io.open", "os.system", "os.popen", "os.fork", "os.forkpty", "os.kill", "os.remove",
    "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.removedirs", "os.listdir",
    "os.scandir", "os.walk", "os.posix_spawn", "os.posix_spawnp", "os.open", "os.write",
    "os.read", "os.truncate", "torch.load", "torch.save", "numpy.load", "numpy.save",
    "numpy.fromfile", "numpy.memmap", "pathlib.Path.read_text", "os._exit",
}
_BANNED_PREFIXES = ("os.exec", "os.spawn")
_PATH_IO_METHODS = {"read_text", "write_text", "read_bytes", "write_bytes", "unlink", "rmdir",
                    "rename", "replace", "touch", "iterdir", "glob", "rglob"}


# Threads and processes the candidate's C++ would start itself. OpenMP (#pragma omp) is not
# here: its parallel regions end before the function returns.
_CPP_THREADS = re.compile(r"\b(std::j?thread\b(?!::)|std::async\b|pthread_create\b|posix_spawnp?\b|"
                          r"popen\b)")


def rule_concurrency_and_io(candidate, options):
    findings = []
    for node in ast.walk(candidate.tree):
        for module in imported_modules(node):
            banned = _banned_module(module)
            if banned:
                findings.append((node.lineno, f"imports {module}: threads, processes, network "
                                 "and file access are not allowed in a candidate"))
        if isinstance(node, ast.Call):
            message = _io_call_message(candidate, node)
            if message:
                findings.append((node.lineno, message))
    for text in candidate.cpp_sources:
        for match in _CPP_THREADS.finditer(text):
            what = match.group(1)
            findings.append((string_line(candidate, text, match.start()),
                             f"{what} in C++: a thread or process the candidate starts can work "
                             "after forward returns, outside the timed call; not allowed"))
    return list(dict.fromkeys(findings))


def _banned_module(module):
    parts = module.split(".")
    return any(".".join(parts[:i]) in _BANNED_MODULES for i in range(1, len(parts) + 1))


def _io_call_message(candidate, call):
    name = candidate.qualname(call.func) or ""
    if name in ("__import__", "importlib.import_module") and call.args:
        imported = candidate.string_value(call.args[0])
        if imported is not None and _banned_module(imported):
            return f"imports {imported} dynamically: threads, processes and I/O are not allowed"
    if name in _BANNED_CALLS or name.startswith(_BANNED_PREFIXES) or _banned_module(name):
        return f"calls {name}: processes, threads and file access are not allowed in a candidate"
    if isinstance(call.func, ast.Attribute) and call.func.attr in _PATH_IO_METHODS:
        receiver = candidate.qualname(call.func.value) or ""
        inner = call.func.value
        if receiver.startswith("pathlib") or (isinstance(inner, ast.Call) and
                                              (candidate.qualname(inner.func) or "").startswith("pathlib")):
            return f"pathlib .{call.func.attr}(): file access is not allowed in a candidate"
    return None
