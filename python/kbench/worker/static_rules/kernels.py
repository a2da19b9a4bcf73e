"""Rules on the kernel itself: the backend's kind of kernel must exist (exploits 1, 2), with the
backend inferred when not given, and a lower precision than the reference's is flagged (13).
docs/static-checks.md has the table.
"""

import ast
import re

from ..static_analysis import string_line

# ---------------------------------------------------------------- kernel required

_FUNCTION_DEFINITION = re.compile(r"[\w:<>\*&]+\s+[\*&]?\s*\w+\s*\([^;{}]*\)\s*(const\s*)?\{")


def infer_backend(candidate):
    if any(e["cuda"] for e in candidate.compiled_sources) or any("__global__" in t for t in candidate.cpp_sources):
        return "cuda"
    if _triton_kernels(candidate):
        return "triton"
    return "cpu"


def _triton_kernels(candidate):
    kernels = []
    for node in ast.walk(candidate.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if (candidate.qualname(target) or "") in ("triton.jit", "triton.autotune",
                                                          "triton.heuristics"):
                    kernels.append(node)
    return kernels


_REQUIREMENTS = {
    "cuda-global": ("a __global__ function in CUDA sources compiled with load_inline "
                    "(or torch.utils.cpp_extension.load with sources)"),
    "triton-jit": "a @triton.jit function",
    "cpp-function": "a C++ function compiled through load_inline(cpp_sources=...)",
    "none": "",
}


def _meets(candidate, requirement):
    compiled = candidate.compiled_sources
    if requirement == "cuda-global":
        return any("__global__" in e["cuda"] or "__global__" in e["cpp"] or e["files"] for e in compiled)
    if requirement == "triton-jit":
        return bool(_triton_kernels(candidate))
    if requirement == "cpp-function":
        return any(_FUNCTION_DEFINITION.search(e["cpp"] + "\n" + e["cuda"]) or e["files"] for e in compiled)
    return True


def rule_kernel_required(candidate, options):
    backend = options["backend"]
    requirement = options.get("backends", {}).get(backend, "none")
    if _meets(candidate, requirement):
        return []
    line = candidate.modelnew.lineno if candidate.modelnew else None
    return [(line, f"backend {backend} needs {_REQUIREMENTS[requirement]}; none was found, so "
             "no custom kernel would run")]


# ---------------------------------------------------------------- precision downgrade

_LOW_PRECISION = {"torch.float16", "torch.half", "torch.bfloat16"}
_CPP_LOW_PRECISION = re.compile(r"\b(__float2half\w*|__half2?\w*|__nv_bfloat16\w*|__float2bfloat16\w*|"
                                r"__h(add|mul|fma|sub|div)\w*|at::kHalf|at::kBFloat16|torch::kFloat16|"
                                r"torch::kBFloat16|torch::kHalf)\b")


def rule_precision_downgrade(candidate, options):
    findings = []
    for node in ast.walk(candidate.tree):
        if isinstance(node, ast.Attribute) and candidate.qualname(node) in _LOW_PRECISION:
            findings.append((node.lineno, f"{candidate.qualname(node)}: lower precision than the "
                             "reference; the tolerance is the reference dtype's"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("half", "bfloat16") and not node.args:
                findings.append((node.lineno, f".{node.func.attr}() casts to lower precision"))
    for text in candidate.cpp_sources:
        for match in _CPP_LOW_PRECISION.finditer(text):
            findings.append((string_line(candidate, text, match.start()),
                             f"{match.group(0)} in C++: half-precision arithmetic"))
    return findings
