"""Rules against PyTorch doing the work: torch compute in forward (exploit 1), reuse of the
reference Model (3), and a fallback to PyTorch when the kernel fails (2, 3). docs/static-checks.md
has the table; `_TORCH_ALLOWED` and `_COMPUTE_METHODS` decide what counts as computing.
"""

import ast

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
