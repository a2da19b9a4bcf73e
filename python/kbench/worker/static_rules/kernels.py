"""Rules on the kernel itself: the backend's kind of kernel must exist and forward must use it
(exploits 1, 2: no kernel, a decoy), with the backend inferred when not given, and a lower
precision than the reference's is flagged (13).
docs/static-checks.md has the table.
"""

import ast
import re

from ..static_analysis import LOADERS, string_line

# ---------------------------------------------------------------- kernel required

_FUNCTION_DEFINITION = re.compile(r"[\w:<>\*&]+\s+[\*&]?\s*\w+\s*\([^;{}]*\)\s*(const\s*)?\{")


# Kernel languages written in Python, each known by the decorators of its kernel functions.
DSL_DECORATORS = {
    "triton": ("triton.jit", "triton.autotune", "triton.heuristics"),
    # CUTLASS's CuTe DSL: `import cutlass.cute as cute`, @cute.kernel (device) and @cute.jit (host).
    "cute": ("cutlass.cute.kernel", "cutlass.cute.jit"),
    # TileLang: `import tilelang.language as T`, @T.prim_func, or @tilelang.jit over one.
    "tilelang": ("tilelang.language.prim_func", "tilelang.jit"),
}


def infer_backend(candidate):
    if any(e["cuda"] for e in candidate.compiled_sources) or any("__global__" in t for t in candidate.cpp_sources):
        return "cuda"
    for backend in DSL_DECORATORS:
        if _dsl_kernels(candidate, backend):
            return backend
    return "cpu"


def _decorated(candidate, decorators):
    """The functions with one of `decorators` (qualified names, called or not)."""
    kernels = []
    for node in ast.walk(candidate.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if (candidate.qualname(target) or "") in decorators:
                    kernels.append(node)
                    break
    return kernels


def _dsl_kernels(candidate, backend):
    """The functions decorated as kernels of `backend`'s language (DSL_DECORATORS)."""
    return _decorated(candidate, DSL_DECORATORS[backend])


def _triton_kernels(candidate):
    return _dsl_kernels(candidate, "triton")


_REQUIREMENTS = {
    "cuda-global": ("a __global__ function in CUDA sources compiled with load_inline "
                    "(or torch.utils.cpp_extension.load with sources)"),
    "triton-jit": "a @triton.jit function",
    "cute-kernel": "a @cute.kernel function (CUTLASS CuTe DSL)",
    "tilelang-prim-func": "a TileLang @T.prim_func (or @tilelang.jit) function",
    "cpp-function": "a C++ function compiled through load_inline(cpp_sources=...)",
    "none": "",
}


def _meets(candidate, requirement):
    compiled = candidate.compiled_sources
    if requirement == "cuda-global":
        return any("__global__" in e["cuda"] or "__global__" in e["cpp"] or e["files"] for e in compiled)
    if requirement == "triton-jit":
        return bool(_triton_kernels(candidate))
    if requirement == "cute-kernel":  # the device function: a @cute.jit host one launches nothing
        return bool(_decorated(candidate, ("cutlass.cute.kernel",)))
    if requirement == "tilelang-prim-func":
        return bool(_dsl_kernels(candidate, "tilelang"))
    if requirement == "cpp-function":
        return any(_FUNCTION_DEFINITION.search(e["cpp"] + "\n" + e["cuda"]) or e["files"] for e in compiled)
    return True


def rule_kernel_required(candidate, options):
    backend = options["backend"]
    requirement = options.get("backends", {}).get(backend, "none")
    line = candidate.modelnew.lineno if candidate.modelnew else None
    if not _meets(candidate, requirement):
        return [(line, f"backend {backend} needs {_REQUIREMENTS[requirement]}; none was found, so "
                 "no custom kernel would run")]
    if requirement == "none" or candidate.modelnew is None or _forward_uses_own_code(candidate):
        return []
    what = {"triton-jit": "@triton.jit function", "cute-kernel": "CuTe DSL kernel",
            "tilelang-prim-func": "TileLang kernel"}.get(requirement, "compiled extension")
    return [(line, f"forward never uses the {what} it defines (nor does anything forward calls): "
             "a kernel that is never launched is a decoy and torch does the work; call your "
             "kernel from forward")]


def _forward_uses_own_code(candidate):
    """Whether the code forward reaches names the candidate's own compiled code: a name bound to
    what load_inline/load returned (through aliases and `self.` attributes), a loader call, a
    kernel function of a Python kernel language (@triton.jit, CuTe DSL, TileLang), or torch.ops
    when the extension registers operators there."""
    own = set(candidate.extension_names) | {
        k.name for backend in DSL_DECORATORS for k in _dsl_kernels(candidate, backend)}
    _bound_to(candidate, own)
    registers_ops = any("TORCH_LIBRARY" in t for t in candidate.cpp_sources)
    for node in _reached_code(candidate):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in own:
                return True
            if isinstance(sub, ast.Attribute) and sub.attr in own:
                return True
            if isinstance(sub, ast.Call) and candidate.qualname(sub.func) in LOADERS:
                return True
            if registers_ops and (candidate.qualname(sub) or "").startswith("torch.ops."):
                return True
    return False


def _bound_to(candidate, names):
    """Adds to `names` the names and `self.` attributes assigned from one of them (`run =
    _ext.run`, `self.ext = _ext`), until nothing changes."""
    assignments = [n for n in ast.walk(candidate.tree) if isinstance(n, ast.Assign)]
    changed = True
    while changed:
        changed = False
        for node in assignments:
            mentioned = {s.id for s in ast.walk(node.value) if isinstance(s, ast.Name)}
            mentioned |= {s.attr for s in ast.walk(node.value) if isinstance(s, ast.Attribute)}
            if not mentioned & names:
                continue
            for target in node.targets:
                for sub in ast.walk(target):
                    name = sub.id if isinstance(sub, ast.Name) else (
                        sub.attr if isinstance(sub, ast.Attribute) else None)
                    if name and name not in names and name != "self":
                        names.add(name)
                        changed = True


def _reached_code(candidate):
    """What forward reaches (static_analysis's reachable functions), and the module-level
    functions and classes that code names, transitively: a torch.autograd.Function's `apply`,
    a helper passed as a value."""
    # ModelNew itself is left out: its methods count when forward calls them through `self`,
    # and naming the class must not make its __init__ (where the extension is bound) count.
    top = {n.name: n for n in candidate.tree.body
           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
           and n is not candidate.modelnew}
    reached = list(candidate.reachable)
    seen = {id(n) for n in reached}
    index = 0
    while index < len(reached):
        for sub in ast.walk(reached[index]):
            target = top.get(sub.id) if isinstance(sub, ast.Name) else None
            if target is not None and id(target) not in seen:
                seen.add(id(target))
                reached.append(target)
        index += 1
    return reached


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
