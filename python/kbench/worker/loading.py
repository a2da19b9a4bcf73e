"""Loading problems and candidates from their files, unmodified."""

import os
import sys
import types
from pathlib import Path

# First: the integrity module seals kbench_native and snapshots torch's API before any problem or
# candidate file runs (integrity.py).
from . import integrity
from .errors import PhaseError, first_compiler_error, format_traceback, one_line, user_frame


def _read_source(path: Path, role: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PhaseError("harness_error", f"cannot read the {role} file {path}: {exc.strerror}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PhaseError(
            "compile_error" if role == "candidate" else "harness_error",
            f"{path}: byte {exc.start} is not UTF-8; a {role} must be a Python source file",
        )


def exec_module(path, module_name, role, inject=None, failure_status="compile_error"):
    """Executes a Python file as module `module_name`; errors become PhaseErrors naming the file."""
    path = Path(path).resolve()
    source = _read_source(path, role)
    try:
        code = compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        status = "compile_error" if role == "candidate" else "harness_error"
        raise PhaseError(
            status,
            f"{path}:{exc.lineno}: SyntaxError: {exc.msg}",
            details={"line": exc.lineno, "log": format_traceback(exc)},
        )
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    if inject:
        module.__dict__.update(inject)
    sys.modules[module_name] = module
    integrity.before_foreign_code()
    try:
        exec(code, module.__dict__)
    except PhaseError:
        raise
    except BaseException as exc:  # SystemExit too: a file that exits on import is broken
        log = format_traceback(exc)
        where = user_frame(exc, path)
        at = f"{path}:{where[0]}" if where else str(path)
        refused = integrity.refused_import(exc, at) if role == "candidate" else None
        if refused is not None:
            raise refused
        if "Error building extension" in str(exc):
            first = first_compiler_error(str(exc)) or one_line(exc)
            raise PhaseError(
                "compile_error",
                f"{path}: the kernel did not compile: {first}",
                details={"log": str(exc), "first_error": first},
            )
        raise PhaseError(
            failure_status if role == "candidate" else "harness_error",
            f"{at}: the {role} failed while loading: {one_line(exc)}",
            details={"log": log, "line": where[0] if where else None},
        )
    return module


def load_problem(path):
    """A KernelBench or PopcornBench problem, with `popcorn_pri` in its namespace."""
    from kernelbench import popcorn_random_inputs

    module = exec_module(path, "kbench_problem", "problem", inject={"popcorn_pri": popcorn_random_inputs})
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise PhaseError(
                "harness_error",
                f"{path}: the problem defines no `{name}`; a KernelBench problem needs "
                "class Model, get_inputs() and get_init_inputs()",
            )
    return module


def load_candidate(path, problem=None):
    """The candidate's module: a Python file run as kbench_candidate, or, for a file in the
    torch-free kernel format (.cu, .cpp), its build with a ModelNew for `problem`
    (native_candidate.py; None where only the build is wanted)."""
    from . import native_candidate

    if native_candidate.is_native(path):
        return native_candidate.module_for(path, problem, os.environ.get("TORCH_EXTENSIONS_DIR", "."))
    from .. import light_cxx, light_nvcc

    # build.ninja's compilers (light_nvcc.py, light_cxx.py: the smaller headers and kbench's
    # precompiled ones); only where the file names cpp_extension, since importing it costs the
    # others 0.6 s and a warning line.
    if "cpp_extension" in Path(path).read_text(encoding="utf-8", errors="replace"):
        light_nvcc.install()
        light_cxx.install()
    module = exec_module(path, "kbench_candidate", "candidate")
    if not isinstance(getattr(module, "ModelNew", None), type):
        found = sorted(n for n, v in vars(module).items() if isinstance(v, type) and v.__module__ == module.__name__)
        hint = f" (it defines: {', '.join(found)})" if found else ""
        raise PhaseError(
            "runtime_error",
            f"{path}: the candidate defines no class `ModelNew`{hint}; "
            "a candidate must define class ModelNew(nn.Module)",
        )
    return module
