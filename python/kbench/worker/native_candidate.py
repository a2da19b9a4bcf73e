"""Candidates in kbench's torch-free kernel format (docs/native-kernels.md): one .cu file (one
.cpp file for the CPU) that defines `kbench_forward` (python/kbench/include/kbench_kernel.h).

A load_inline build parses torch's headers twice, once for the binding and once in the CUDA
unit, which is where its 45-70 s go; this format needs neither, so nvcc builds it in a second or
two. kbench supplies what a ModelNew would: the problem's Model is built with the same seeded
init to hold the parameters (passed after the forward arguments), the outputs are allocated
with the shapes and dtypes that Model gives on the meta device, and the call goes through
ctypes on torch's current stream.
"""

import copy
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from .errors import PhaseError

# torch is imported where a ModelNew is made, not here: the compile worker builds a native
# candidate without importing torch at all (5-10 s of its time on the 2-core machine).

SUFFIXES = {".cu": "cuda", ".cpp": "cpu"}
HEADER_DIR = Path(__file__).resolve().parent.parent / "include"
# Build settings: part of the build's name, so that a change of them builds anew.
NVCC_FLAGS = ["-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-lineinfo"]
CXX_FLAGS = ["-O3", "-std=c++17", "-shared", "-fPIC", "-march=native"]

# kbench_kernel.h's enum kbench_dtype, by torch's dtype name.
DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2, "float64": 3, "int32": 4, "int64": 5, "int8": 6,
          "uint8": 7, "bool": 8}


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("ndim", ctypes.c_int32),
                ("dtype", ctypes.c_int32)]


def is_native(path) -> bool:
    return Path(path).suffix in SUFFIXES


def _arch_flags():
    """nvcc's -gencode for TORCH_CUDA_ARCH_LIST ("9.0", "8.0;9.0+PTX"), as the orchestrator sets
    it for the evaluation's GPU."""
    flags = []
    for entry in os.environ.get("TORCH_CUDA_ARCH_LIST", "").replace(";", " ").split():
        ptx = entry.endswith("+PTX")
        number = entry.removesuffix("+PTX").replace(".", "")
        flags += ["-gencode", f"arch=compute_{number},code=sm_{number}"]
        if ptx:
            flags += ["-gencode", f"arch=compute_{number},code=compute_{number}"]
    return flags


def _compiler(kind):
    if kind == "cuda":
        home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
        nvcc = Path(home) / "bin" / "nvcc"
        if nvcc.exists():
            return str(nvcc), NVCC_FLAGS + _arch_flags()
        found = shutil.which("nvcc")
        if not found:
            raise PhaseError("compile_error", "no nvcc: set CUDA_HOME to the CUDA toolkit to build a .cu candidate")
        return found, NVCC_FLAGS + _arch_flags()
    return os.environ.get("CXX") or shutil.which("g++") or "c++", CXX_FLAGS


def build(path, extensions_dir):
    """The shared library for the candidate at `path`, built into `extensions_dir` unless a build
    of the same source and settings is there. Returns (library path, seconds spent, cached)."""
    path = Path(path).resolve()
    kind = SUFFIXES[path.suffix]
    source = path.read_bytes()
    compiler, flags = _compiler(kind)
    key = hashlib.sha256(source + "\0".join([compiler] + flags).encode()).hexdigest()[:20]
    out_dir = Path(extensions_dir) / f"native_{key}"
    library = out_dir / "kernel.so"
    if library.exists():
        return library, 0.0, True
    out_dir.mkdir(parents=True, exist_ok=True)
    # The source under a fixed name beside the build: compiler messages then name a file the
    # candidate's author recognises by its suffix, and the path does not leak the scratch layout.
    staged = out_dir / f"kernel{path.suffix}"
    staged.write_bytes(source)
    partial = out_dir / "kernel.so.partial"
    command = [compiler, *flags, f"-I{HEADER_DIR}", str(staged), "-o", str(partial)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, errors="replace")
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        log = (done.stdout + done.stderr).replace(str(staged), str(path))
        # gcc's and nvcc's "FILE:LINE:COL: error: ..." (nvcc: "FILE(LINE): error: ...").
        first = next((line for line in log.splitlines() if re.search(r"\berror\b\s*:", line)),
                     log.strip()[:300])
        raise PhaseError("compile_error", f"{path}: the kernel did not compile: {first}",
                         details={"log": log, "first_error": first})
    partial.rename(library)  # whole or not at all: a build cut short is not found next time
    return library, seconds, False


def _pointer_array(values):
    return (ctypes.c_int64 * max(1, len(values)))(*values)


def _describe(tensor, keep):
    name = str(tensor.dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise PhaseError("runtime_error", f"a {tensor.dtype} tensor has no kbench_dtype (kbench_kernel.h)")
    shape, strides = _pointer_array(tensor.shape), _pointer_array(tensor.stride())
    keep += [shape, strides]
    return _Tensor(tensor.data_ptr(), shape, strides, tensor.dim(), DTYPES[name])


def module_for(path, problem, extensions_dir):
    """A module-like namespace whose ModelNew runs the native candidate at `path` for `problem`
    (None in the compile worker, which only builds)."""
    library_path, seconds, cached = build(path, extensions_dir)
    namespace = type("NativeCandidate", (), {})()
    namespace.build_seconds, namespace.build_cached = seconds, cached
    if problem is None:
        namespace.ModelNew = type("ModelNew", (), {})  # only built here; the candidate phase makes the real one
        return namespace
    import torch
    import torch.nn as nn
    library = ctypes.CDLL(str(library_path))
    try:
        forward = library.kbench_forward
    except AttributeError:
        raise PhaseError("compile_error", f"{path}: defines no extern \"C\" kbench_forward (kbench_kernel.h)")
    forward.restype = ctypes.c_int
    forward.argtypes = [ctypes.POINTER(_Tensor), ctypes.c_int32, ctypes.POINTER(_Tensor), ctypes.c_int32,
                        ctypes.c_void_p]
    error = getattr(library, "kbench_error", None)
    if error is not None:
        error.restype, error.argtypes = ctypes.c_char_p, []
    shown = str(Path(path).resolve())

    class ModelNew(nn.Module):
        def __init__(self, *init_inputs):
            super().__init__()
            # The parameters an honest ModelNew would make: the problem's own, same seeded init.
            self.reference = problem.Model(*init_inputs)
            self._shapes = {}

        def _outputs_like(self, args):
            key = tuple((a.shape, a.dtype) if isinstance(a, torch.Tensor) else repr(a) for a in args)
            if key not in self._shapes:
                try:
                    self._shapes[key] = _meta_forward(self.reference, args)
                except Exception as exc:  # noqa: BLE001 - any failure means no shapes
                    raise PhaseError("runtime_error", f"{shown}: the output shapes come from the problem's Model "
                                     f"on the meta device, which failed: {exc}")
            device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("cpu"))
            return [torch.empty(shape, dtype=dtype, device=device) for shape, dtype in self._shapes[key]]

        def forward(self, *args):
            if any(not isinstance(a, torch.Tensor) for a in args):
                raise PhaseError("runtime_error", f"{shown}: the native format takes tensor arguments only; this "
                                 "problem's forward gets other values: write a Python ModelNew for it")
            outputs = self._outputs_like(args)
            keep = []
            tensors = list(args) + list(self.reference.state_dict().values())
            ins = (_Tensor * max(1, len(tensors)))(*[_describe(t, keep) for t in tensors])
            outs = (_Tensor * max(1, len(outputs)))(*[_describe(t, keep) for t in outputs])
            cuda = outputs and outputs[0].is_cuda
            stream = torch.cuda.current_stream(outputs[0].device).cuda_stream if cuda else None
            status = forward(ins, len(tensors), outs, len(outputs), stream)
            if status != 0:
                said = error().decode(errors="replace") if error is not None else ""
                raise RuntimeError(f"kbench_forward returned {status}" + (f": {said}" if said else ""))
            return outputs[0] if len(outputs) == 1 else tuple(outputs)

    namespace.ModelNew = ModelNew
    return namespace


def _meta_forward(model, args):
    """(shape, dtype) of each output of `model` on meta copies of `args` and of its weights."""
    import torch

    shadow = copy.deepcopy(model).to("meta")
    with torch.no_grad():
        out = shadow(*[a.to("meta") for a in args])
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [(tuple(o.shape), o.dtype) for o in outs]
