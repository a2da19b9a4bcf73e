"""Rules against output the timer does not see being computed: a side stream the caller's stream
never waits for (exploit 6), and lazy outputs, tensor subclasses that compute when read (8).
docs/static-checks.md has the table.
"""

import ast
import re

from ..static_analysis import string_line
from ._common import imported_modules

# ---------------------------------------------------------------- side streams

_STREAM_NAMES = ("cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority",
                 "getStreamFromPool", "cuStreamCreate", "cuStreamCreateWithPriority",
                 "cublasSetStream", "getStreamFromExternal")
_CPP_STREAM = re.compile(r"\b(" + "|".join(_STREAM_NAMES) + r")\w*")
_CPP_JOIN = re.compile(r"\b(cudaStreamWaitEvent|cudaStreamSynchronize|cudaDeviceSynchronize|"
                       r"cuStreamWaitEvent|cuStreamSynchronize|cuCtxSynchronize|device_synchronize)\b"
                       r"|\.\s*(synchronize|block)\s*\(")
_PY_STREAMS = {"torch.cuda.Stream", "torch.cuda.streams.Stream", "torch.cuda.ExternalStream"}
_PY_CURRENT = {"torch.cuda.current_stream", "torch.cuda.default_stream"}


def rule_stream_without_join(candidate, options):
    created = _python_streams(candidate) + _cpp_streams(candidate)
    if not created:
        return []
    joined = _python_joins(candidate) or any(_CPP_JOIN.search(t) for t in candidate.cpp_sources)
    severity = options.get("joined_severity", "warn") if joined else None
    hint = ("a join exists; check it covers every path" if joined else
            "make the caller's stream wait for it (current_stream().wait_stream(side), "
            "cudaStreamWaitEvent) or the timer misses its work")
    return [(line, f"creates a side stream ({what}); {hint}", severity) for line, what in created]


def _python_streams(candidate):
    return [(c.lineno, candidate.qualname(c.func)) for c in candidate.calls(candidate.tree)
            if candidate.qualname(c.func) in _PY_STREAMS]


def _cpp_streams(candidate):
    found = []
    for text in candidate.cpp_sources:
        for match in _CPP_STREAM.finditer(text):
            found.append((string_line(candidate, text, match.start()), match.group(0)))
        if "##" in text:
            # Token pasting can build a stream API's name from pieces no regex sees whole.
            identifiers = set(re.findall(r"[A-Za-z_]\w*", text))
            for name in _STREAM_NAMES:
                if name not in identifiers and _composable(name, identifiers):
                    found.append((string_line(candidate, text, text.find("##")),
                                  f"{name} assembled by ## token pasting"))
    return found


def _composable(word, pieces):
    """Whether `word` is a concatenation of two or more of `pieces` (word break)."""
    reachable = [True] + [False] * len(word)
    for end in range(1, len(word) + 1):
        for start in range(end):
            if reachable[start] and word[start:end] in pieces and (start, end) != (0, len(word)):
                reachable[end] = True
                break
    return reachable[len(word)]


def _python_joins(candidate):
    """A wait in the right direction: the caller's stream waits (current_stream().wait_stream),
    or a synchronize; `side.wait_stream(current)` only orders the side after the caller."""
    side_names = {t.id for n in ast.walk(candidate.tree) if isinstance(n, ast.Assign)
                  and isinstance(n.value, ast.Call) and candidate.qualname(n.value.func) in _PY_STREAMS
                  for t in n.targets if isinstance(t, ast.Name)}
    for call in candidate.calls(candidate.tree):
        name = candidate.qualname(call.func) or ""
        if name in ("torch.cuda.synchronize",):
            return True
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("wait_stream", "wait_event",
                                                                        "synchronize"):
            receiver = call.func.value
            if isinstance(receiver, ast.Name) and receiver.id in side_names and call.func.attr != "synchronize":
                continue
            return True
    return False


# ---------------------------------------------------------------- lazy output

_TENSOR_BASES = {"torch.Tensor", "torch._C._TensorBase", "torch._C.TensorBase", "torch.nn.Parameter"}


def rule_lazy_output(candidate, options):
    findings = []
    for node in ast.walk(candidate.tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if candidate.qualname(base) in _TENSOR_BASES:
                    findings.append((node.lineno, f"class {node.name} subclasses torch.Tensor: "
                                     "outputs must be plain tensors computed in forward"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in ("__torch_function__", "__torch_dispatch__"):
                findings.append((node.lineno, f"defines {node.name}: intercepting torch calls "
                                 "(deferred or lazy outputs) is not allowed"))
        elif isinstance(node, ast.Attribute) and node.attr in ("_make_subclass", "_make_wrapper_subclass"):
            findings.append((node.lineno, f"{node.attr}: tensor subclasses are not allowed"))
        for module in imported_modules(node):
            if module.startswith(("torch.utils._python_dispatch", "torch.overrides")):
                findings.append((node.lineno, f"imports {module}: intercepting torch calls is not allowed"))
    return findings
