"""Rules against tampering with the harness: patching torch, timers or kbench from Python or
from C++ (exploit 9), importing kbench's own modules (9), and introspection that walks frames,
the heap or raw memory to find the reference's tensors (4, 9, 11). docs/static-checks.md has
the table.
"""

import ast
import re

from ..static_analysis import string_line
from ._common import imported_modules

# ---------------------------------------------------------------- patching

_PATCH_ROOTS = ("torch", "time", "triton", "kbench", "kernelbench", "builtins", "sys", "numpy")


def rule_patching(candidate, options):
    findings = []
    for node in ast.walk(candidate.tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            message = _patch_target_message(candidate, target)
            if message:
                findings.append((node.lineno, message))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            if node.func.id in ("setattr", "delattr"):
                message = _patch_target_message(candidate, node.args[0], whole=True)
                if message:
                    findings.append((node.lineno, f"{node.func.id}() " + message))
    for text in candidate.cpp_sources:
        findings += _cpp_patching(candidate, text)
    return findings


# C++ that writes into Python objects it did not create: an attribute of a module it imported
# (`py::module_::import("torch").attr("Tensor").attr("detach") = ...`), setattr through the C
# API or pybind11, a type's dictionary or a method table, or kernels registered over ATen's own
# operators. A torch extension needs none of these: it defines functions (m.def, load_inline's
# `functions=`) and its own operators (TORCH_LIBRARY of its own namespace).
_CPP_PATCHING = re.compile(
    r"\b(PyObject_SetAttr\w*|PyObject_GenericSetAttr|PyObject_DelAttr\w*|PyType_Modified|tp_dict|"
    r"ml_meth|d_method|tp_richcompare|tp_as_number|py::setattr|pybind11::setattr|"
    r"TORCH_LIBRARY_IMPL\s*\(\s*(?:aten|_)\b|TORCH_LIBRARY_FRAGMENT\s*\(\s*aten\b)"
)
_CPP_IMPORTS = re.compile(r"(?:module_|module)::import\s*\(|PyImport_\w+\s*\(")
_CPP_ATTR_ASSIGN = re.compile(r"\.attr\(\s*\"[^\"]*\"\s*\)\s*=(?!=)")


def _cpp_patching(candidate, text):
    findings = []
    for match in _CPP_PATCHING.finditer(text):
        findings.append((string_line(candidate, text, match.start()),
                         f"{match.group(1).split('(')[0].strip()} in C++: replacing Python attributes, "
                         "method tables or ATen's kernels is patching; do not"))
    if _CPP_IMPORTS.search(text):
        for match in _CPP_ATTR_ASSIGN.finditer(text):
            findings.append((string_line(candidate, text, match.start()),
                             "C++ imports a Python module and assigns one of its attributes "
                             f"({match.group(0).rstrip('= ')}): patching torch or the harness is "
                             "not allowed"))
    return findings


# ---------------------------------------------------------------- kbench's own modules

_HARNESS_NAME = re.compile(r"(?:kbench_native|kbench)(?:\.[\w.]*)?")
_CPP_HARNESS_NAME = re.compile(r"\bkbench_native\b|\"kbench(?:\.[\w.]*)?\"")


def rule_harness_import(candidate, options):
    """kbench_native (which controls the timing's tracing) and the kbench package are the
    harness's: a candidate imports neither, names neither in a string (sys.modules[...],
    importlib), nor reaches them from C++."""
    findings = []
    for node in ast.walk(candidate.tree):
        for module in imported_modules(node):
            if module.split(".")[0] in ("kbench", "kbench_native"):
                findings.append((node.lineno, f"imports {module}: kbench's own modules (kbench_native "
                                 "controls the timing's tracing) are not for candidates"))
                break
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                _HARNESS_NAME.fullmatch(node.value.strip()):
            findings.append((node.lineno, f"names {node.value.strip()!r}: kbench's own modules are not "
                             "for candidates"))
    for text in candidate.cpp_sources:
        for match in _CPP_HARNESS_NAME.finditer(text):
            findings.append((string_line(candidate, text, match.start()),
                             f"C++ names {match.group(0)}: kbench's own modules are not for candidates"))
    return _unique(findings)


def _unique(findings):
    return list(dict.fromkeys(findings))


def _patch_target_message(candidate, target, whole=False):
    if isinstance(target, ast.Attribute) and target.attr in ("__code__", "__globals__", "__builtins__"):
        return f"assigns {target.attr}: swapping a function's code is patching; do not"
    if isinstance(target, ast.Name) and target.id == "__builtins__":
        return "replaces __builtins__"
    node = target if whole else getattr(target, "value", None)
    if node is None:
        return None
    if _is_sys_modules(candidate, node) or _is_sys_modules(candidate, target):
        return "changes sys.modules: replacing modules is patching the harness; do not"
    if isinstance(target, ast.Subscript) and isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return "writes a module's __dict__: patching; do not"
    name = candidate.qualname(node) or ""
    if isinstance(target, (ast.Attribute, ast.Subscript)) or whole:
        if name.split(".")[0] in _PATCH_ROOTS and name != "sys.argv":
            return (f"assigns to an attribute of {name}: patching torch, timers or the harness "
                    "is not allowed")
    return None


def _is_sys_modules(candidate, node):
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
        if candidate.qualname(node) == "sys.modules":
            return True
        node = node.value if not isinstance(node, ast.Call) else node.func
    return False


# ---------------------------------------------------------------- introspection

_INTROSPECTION_MODULES = ("gc", "inspect", "ctypes", "cffi", "tracemalloc")
_INTROSPECTION_CALLS = {
    "sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.exc_info",
    "torch.cuda.memory_snapshot", "torch.cuda.memory._snapshot", "torch.cuda._snapshot",
    "torch.cuda.memory._record_memory_history", "eval", "exec", "compile", "globals",
    "torch.cuda.memory._dump_snapshot",
}
_FRAME_ATTRIBUTES = {"f_back", "f_globals", "f_locals", "f_builtins", "gi_frame", "tb_frame",
                     "cr_frame", "__subclasses__", "__globals__", "__closure__"}
_CPP_INTROSPECTION = re.compile(r"\b(cuMemGetAddressRange\w*|cuPointerGetAttribute\w*|dlsym|dlopen|"
                                r"mprotect|ptrace|/proc/self)\b")


def rule_introspection(candidate, options):
    findings = []
    for node in ast.walk(candidate.tree):
        for module in imported_modules(node):
            if module.split(".")[0] in _INTROSPECTION_MODULES:
                findings.append((node.lineno, f"imports {module}: walking the heap, frames or raw "
                                 "memory (to find the reference's tensors) is not allowed"))
        if isinstance(node, ast.Call):
            name = candidate.qualname(node.func) or ""
            if name in _INTROSPECTION_CALLS:
                findings.append((node.lineno, f"calls {name}: introspection or dynamic code is "
                                 "not allowed in a candidate"))
            elif name in ("__import__", "importlib.import_module") and node.args:
                imported = candidate.string_value(node.args[0])
                if imported is None or imported.split(".")[0] in _INTROSPECTION_MODULES:
                    findings.append((node.lineno, f"{name}() of {imported or 'a computed name'}: "
                                     "import modules by name with `import`"))
        if isinstance(node, ast.Attribute) and node.attr in _FRAME_ATTRIBUTES:
            findings.append((node.lineno, f".{node.attr}: frame or object-graph walking is not "
                             "allowed in a candidate"))
    for text in candidate.cpp_sources:
        for match in _CPP_INTROSPECTION.finditer(text):
            findings.append((string_line(candidate, text, match.start()),
                             f"{match.group(1)} in C++: scanning or patching memory is not allowed"))
    return findings
