"""The static rules (docs/static-checks.md has the table, and the exploit each one stops).

Each rule is `rule(candidate, options) -> [(line, message, severity_override_or_None)]`; the rule
set (python/kbench/rules/*.json) gives its severity. Rules look at qualified names
(static_analysis.Candidate.qualname), so aliases do not hide a call.
"""

import ast
import re

from .static_analysis import string_line

# ---------------------------------------------------------------- torch compute in forward

# torch functions that allocate, describe or move data without computing on it.
_TORCH_ALLOWED = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "arange", "tensor", "as_tensor", "from_numpy", "rand", "randn", "randint",
    "rand_like", "randn_like", "manual_seed", "is_tensor", "is_floating_point", "numel", "device",
    "Size", "finfo", "iinfo", "no_grad", "inference_mode", "enable_grad", "is_grad_enabled",
    "get_default_dtype", "broadcast_shapes", "promote_types", "result_type", "Generator",
    "set_grad_enabled", "Tensor", "dtype", "float32", "float16", "bfloat16", "float64", "int32",
    "int64", "bool", "half", "float", "long", "int", "nn.Parameter", "nn.Module",
    "nn.ModuleList", "nn.ParameterList", "nn.ModuleDict", "nn.ParameterDict",
    "nn.init", "nn.functional.pad",
}
# torch namespaces that are not compute: device queries, streams, collectives, build tools.
_TORCH_ALLOWED_PREFIXES = ("cuda.", "distributed.", "utils.", "backends.", "version", "autograd.grad_mode")
# Tensor methods that compute (the receiver's type is unknown, so this list is the judge).
_COMPUTE_METHODS = {
    "abs", "add", "add_", "addmm", "addmv", "amax", "amin", "argmax", "argmin", "baddbmm", "bmm",
    "clamp", "clamp_", "clamp_min", "clamp_max", "clip", "cos", "cumsum", "cumprod", "div", "div_",
    "dot", "erf", "exp", "exp_", "gelu", "log", "log_", "log_softmax", "logsumexp", "matmul",
    "max", "mean", "min", "mm", "mul", "mul_", "mv", "neg", "norm", "pow", "prod", "reciprocal",
    "relu", "relu_", "rsqrt", "sigmoid", "sigmoid_", "sin", "softmax", "sqrt", "square", "std",
    "sub", "sub_", "sum", "tanh", "tanh_", "topk", "sort", "var", "masked_fill", "masked_fill_",
    "index_select", "gather", "scatter", "scatter_add", "scatter_add_", "outer", "lerp",
    "maximum", "minimum", "floor", "ceil", "round", "sign", "cross", "conv2d", "linear",
    "__matmul__", "__rmatmul__", "__add__", "__mul__", "__sub__", "__truediv__", "__pow__",
    "addcmul", "addcdiv", "einsum", "tril", "triu", "cumsum_", "silu", "hardtanh", "leaky_relu",
    "softplus", "elu", "selu", "mish", "logaddexp", "diff", "fmod", "remainder",
}
_NN_CONTAINERS = {"Parameter", "ParameterList", "ParameterDict", "Module", "Identity", "init"}


def _torch_compute_name(candidate, call):
    """The qualified torch name `call` computes with, or None for allowed torch calls."""
    name = candidate.qualname(call.func)
    if not name or not name.startswith("torch."):
        return None
    rest = name[len("torch."):]
    if rest in _TORCH_ALLOWED or rest.startswith(_TORCH_ALLOWED_PREFIXES):
        return None
    if rest.startswith("nn.init.") or rest.startswith("Tensor.data_ptr"):
        return None
    if rest.startswith("utils.cpp_extension"):
        return None
    return name


def _nn_submodules(candidate):
    """`self.X` attributes of ModelNew bound to torch.nn layers (or to the reference Model)."""
    layers = {}
    if candidate.modelnew is None:
        return layers
    for node in ast.walk(candidate.modelnew):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            name = candidate.qualname(node.value.func) or ""
            is_layer = name.startswith("torch.nn.") and name.split(".")[-1] not in _NN_CONTAINERS
            if is_layer and not name.startswith("torch.nn.functional"):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                        layers[target.attr] = name
    return layers


def _is_module_receiver(candidate, node):
    """The receiver is an imported module or a compiled extension, not a tensor."""
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    if root.id in candidate.extension_names:
        return True
    qualified = candidate.aliases.get(root.id)
    return qualified is not None and not qualified.startswith("torch")


def rule_torch_compute(candidate, options):
    findings = _dynamic_torch_access(candidate)
    layers = _nn_submodules(candidate)
    for function in candidate.reachable:
        for node in ast.walk(function):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                findings.append((node.lineno, "the `@` operator (a torch matmul) in forward; "
                                 "write the product in your kernel"))
            if not isinstance(node, ast.Call):
                continue
            message = _compute_call_message(candidate, node, layers)
            if message:
                findings.append((node.lineno, message))
    return findings


def _compute_call_message(candidate, call, layers):
    name = _torch_compute_name(candidate, call)
    if name:
        return f"{name} computes in PyTorch inside forward; compute it in your kernel"
    func = call.func
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id == "self" and func.attr in layers:
            return (f"self.{func.attr} ({layers[func.attr]}) is a PyTorch layer called in forward; "
                    "use its parameters in your kernel instead")
        if func.attr in _COMPUTE_METHODS and not _is_module_receiver(candidate, func.value):
            qualified = candidate.qualname(func.value) or ""
            if not qualified.startswith("torch"):
                return (f"tensor method .{func.attr}() computes in PyTorch inside forward; "
                        "compute it in your kernel")
    if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute):
        if isinstance(func.value.value, ast.Name) and func.value.value.id == "self":
            if func.value.attr in layers:
                return f"self.{func.value.attr}[...] calls PyTorch layers in forward"
    return None


def _dynamic_torch_access(candidate):
    """getattr(torch, ...), torch.__dict__[...], vars(torch): a name no rule can read."""
    findings = []
    for node in ast.walk(candidate.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            target = candidate.qualname(node.args[0]) or ""
            if node.func.id in ("getattr", "vars") and target.startswith("torch"):
                findings.append((node.lineno, f"{node.func.id}() on {target}: dynamic attribute "
                                 "access to torch hides which operation runs; name it directly"))
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            if (candidate.qualname(node.value) or "").startswith("torch"):
                findings.append((node.lineno, "torch's __dict__ read: dynamic attribute access "
                                 "to torch hides which operation runs"))
    return findings


# ---------------------------------------------------------------- reference reuse


def rule_reference_reuse(candidate, options):
    findings = []
    defines_model = any(isinstance(n, ast.ClassDef) and n.name == "Model" for n in candidate.tree.body)
    for node in ast.walk(candidate.tree):
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            for base in node.bases:
                if (candidate.qualname(base) or "").split(".")[-1] == "Model":
                    findings.append((node.lineno, "ModelNew subclasses the reference Model: the "
                                     "reference's forward would run instead of a kernel"))
        elif isinstance(node, ast.ImportFrom) and any(a.name in ("Model", "*") for a in node.names):
            if not (node.module or "").startswith(("torch", "triton")):
                findings.append((node.lineno, f"imports the reference Model from {node.module}; "
                                 "the candidate must not run the reference"))
    for function in candidate.reachable:
        for call in candidate.calls(function):
            name = candidate.qualname(call.func) or ""
            if name.split(".")[-1] == "Model" or (name == "Model" and defines_model):
                findings.append((call.lineno, "calls the reference Model in forward"))
    return findings


# ---------------------------------------------------------------- fallback


def rule_fallback(candidate, options):
    findings = []
    for function in candidate.reachable:
        for node in ast.walk(function):
            if isinstance(node, ast.Try):
                findings.append((node.lineno, "try/except in forward (or a function it calls): "
                                 "a failing kernel must fail, not fall back; remove the try"))
            elif isinstance(node, ast.If) and _returns_torch_compute(candidate, node):
                findings.append((node.lineno, "conditional fallback: a branch of forward returns "
                                 "a PyTorch computation; every path must use your kernel"))
    return findings


def _returns_torch_compute(candidate, if_node):
    for branch in (if_node.body, if_node.orelse):
        for statement in branch:
            if isinstance(statement, ast.Return) and statement.value is not None:
                for call in candidate.calls(statement.value):
                    if _torch_compute_name(candidate, call):
                        return True
    return False


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
    return findings


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


def rule_concurrency_and_io(candidate, options):
    findings = []
    for node in ast.walk(candidate.tree):
        for module in _imported_modules(node):
            banned = _banned_module(module)
            if banned:
                findings.append((node.lineno, f"imports {module}: threads, processes, network "
                                 "and file access are not allowed in a candidate"))
        if isinstance(node, ast.Call):
            message = _io_call_message(candidate, node)
            if message:
                findings.append((node.lineno, message))
    return findings


def _imported_modules(node):
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return []


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
        for module in _imported_modules(node):
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
        for module in _imported_modules(node):
            if module.startswith(("torch.utils._python_dispatch", "torch.overrides")):
                findings.append((node.lineno, f"imports {module}: intercepting torch calls is not allowed"))
    return findings


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


# ---------------------------------------------------------------- shape specialised


def rule_shape_specialised(candidate, options):
    constants = {v: k for k, v in candidate.problem_constants.items() if v not in (0, 1)}
    findings = []
    for function in candidate.functions.values():
        shape_names = _shape_names(function)
        for node in ast.walk(function):
            if isinstance(node, ast.Compare):
                literal = _literal_against_shape(node, shape_names)
                if literal is not None:
                    which = f" (the problem's {constants[literal]})" if literal in constants else ""
                    findings.append((node.lineno, f"compares a tensor shape with {literal}{which}: "
                                     "code specialised to the benchmark's shapes; handle any shape"))
    if constants:
        findings.extend(_cpp_shape_literals(candidate, constants))
    return findings


def _is_shape(node, shape_names):
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size":
        return True
    return isinstance(node, ast.Name) and node.id in shape_names


def _shape_names(function):
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _is_shape(node.value, set()):
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _literal_against_shape(compare, shape_names):
    operands = [compare.left] + compare.comparators
    literals = [o.value for o in operands if isinstance(o, ast.Constant) and type(o.value) is int]
    if any(_is_shape(o, shape_names) for o in operands):
        for value in literals:
            if value not in (0, 1):
                return value
    return None


def _cpp_shape_literals(candidate, constants):
    findings = []
    pattern = re.compile(r"(==|!=)\s*(\d+)\b|\b(\d+)\s*(==|!=)")
    for text in candidate.cpp_sources:
        for match in pattern.finditer(text):
            value = int(match.group(2) or match.group(3))
            if value in constants:
                findings.append((string_line(candidate, text, match.start()),
                                 f"C++ compares with {value}, the problem's {constants[value]}: "
                                 "code specialised to the benchmark's shapes"))
    return findings
