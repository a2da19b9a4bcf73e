"""Library compute inside the extension (exploit class 1, through C++): the C++/CUDA a candidate
compiles calls ATen or torch operators (`at::matmul`, `torch::mm`, `at::native::...`, `x.mm(y)`)
or a vendor library (cuBLAS, cuBLASLt, cuDNN, ...), so the work its "kernel" reports is torch's
or the library's. docs/static-checks.md has the table.

Allocation and metadata stay allowed (`at::empty`, `torch::zeros_like`, `data_ptr`, accessors,
sizes, stream getters, `at::parallel_for`, `at::vec`): they are what a kernel of one's own needs.
The operators are torch's own list (aten_ops.txt, scripts/gen-aten-ops.py), less `_ALLOWED`.
"""

import re
from pathlib import Path

from ..static_analysis import string_line
from .streams import _composable

_OPS = frozenset(
    line.strip()
    for line in (Path(__file__).with_name("aten_ops.txt")).read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)

# Operators that allocate, describe, view, copy or convert: what the Python rule allows in forward
# too (static_rules/torch_compute.py, _TORCH_ALLOWED and the views and conversions).
_ALLOWED = {
    "empty", "empty_like", "empty_strided", "empty_permuted", "zeros", "zeros_like", "ones",
    "ones_like", "full", "full_like", "arange", "tensor", "as_tensor", "scalar_tensor", "from_file",
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "manual_seed",
    "is_tensor", "is_floating_point", "is_complex", "is_signed", "is_nonzero", "is_same_size",
    "is_conj", "is_neg", "is_inference", "numel", "get_device", "result_type", "can_cast",
    "promote_types", "alias", "as_strided", "view", "view_as", "reshape", "reshape_as", "narrow",
    "select", "slice", "squeeze", "unsqueeze", "permute", "transpose", "swapaxes", "swapdims", "t",
    "expand", "expand_as", "flatten", "unflatten", "movedim", "moveaxis", "chunk", "split",
    "split_with_sizes", "unbind", "detach", "clone", "copy", "contiguous", "to", "fill", "zero",
    "resize", "record_stream", "size", "stride", "dim",
}

# Namespaces whose members are operators whatever their name: ATen's implementations, the
# generated operator entry points, and torch's C++ frontend for layers and linear algebra.
_OPERATOR_NAMESPACES = {"native", "_ops", "blas", "cudnn", "miopen", "mkldnn", "linalg", "fft",
                        "special", "functional"}
# Namespaces where an operator's name means the operator (per-backend entry points included).
_OPERATOR_HOMES = {(), ("cpu",), ("cuda",), ("meta",), ("compositeexplicitautograd",),
                   ("compositeimplicitautograd",), ("compositeexplicitautogradnonfunctional",)}
# torch::nn's layers and functions compute; its initialisers and the Module base do not.
_NN_ALLOWED = {"init", "Module", "ModuleHolder", "ModuleList", "ModuleDict", "Sequential",
               "Parameter"}

# Tensor methods that compute, called as `x.NAME(` or `x->NAME(` in C++ (the Python rule's list,
# static_rules/torch_compute.py). Narrower than the operator list: names that other C++ types
# have as members too (`size`, `data`, `any`, `all`, `fill`, `sort`, `round`) are left out.
_METHODS = {
    "abs", "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "amax", "amin",
    "argmax", "argmin", "argsort", "baddbmm", "bmm", "clamp", "clamp_max", "clamp_min", "clip",
    "conv1d", "conv2d", "conv3d", "cos", "cumprod", "cumsum", "div", "dot", "einsum", "erf", "exp",
    "gather", "gelu", "hardtanh", "index_select", "inner", "kron", "layer_norm", "leaky_relu",
    "lerp", "linear", "log", "log_softmax", "logsumexp", "masked_fill", "matmul", "max", "maximum",
    "mean", "min", "minimum", "mm", "mul", "mv", "neg", "norm", "outer", "pow", "prod",
    "reciprocal", "relu", "rsqrt", "scatter", "scatter_add", "sigmoid", "silu", "sin", "softmax",
    "softplus", "sqrt", "square", "std", "sub", "sum", "tanh", "tensordot", "topk", "tril", "triu",
    "var", "vdot",
}
_METHOD_CALL = re.compile(r"(?<=[\w\)\]])\s*(?:\.|->)\s*(" + "|".join(sorted(_METHODS)) +
                          r")_?\s*(?:<[^<>;{}()]*>\s*)?\(")

# Vendor libraries: calls into them, the handles torch keeps for them, and their headers.
_VENDOR_PREFIXES = ("cublasLt", "cublas", "cudnn", "cusparseLt", "cusparse", "cusolver", "cufft",
                    "miopen", "rocblas", "hipblas")
_VENDOR_CALL = re.compile(r"\b((?:" + "|".join(_VENDOR_PREFIXES) + r")[A-Z]\w*)")
_VENDOR_HANDLES = re.compile(r"\b(getCurrentCUDABlasHandle|getCurrentCUDABlasLtHandle|"
                             r"getCurrentCUDASparseHandle|getCurrentCUDASolverDnHandle|"
                             r"getCudnnHandle|getMiopenHandle|getCurrentHIPBlasHandle)\b")
_VENDOR_HEADER = re.compile(r"#\s*include\s*[<\"]\s*((?:" + "|".join(_VENDOR_PREFIXES) +
                            r")\w*\.h|ATen/native/[\w/]+\.\w+|ATen/cudnn/[\w/]+\.\w+|"
                            r"ATen/ops/\w+\.h)\s*[>\"]")
_INCLUDE = re.compile(r"#\s*include[^\n]*")
_LIBRARY_FOR = {"cublasLt": "cuBLASLt", "cublas": "cuBLAS", "cudnn": "cuDNN",
                "cusparseLt": "cuSPARSELt", "cusparse": "cuSPARSE", "cusolver": "cuSOLVER",
                "cufft": "cuFFT", "miopen": "MIOpen", "rocblas": "rocBLAS", "hipblas": "hipBLAS"}
# The heavy operators: looked for unqualified after `using namespace at;` (math functions like
# `exp` and `max` are CUDA's too, so not every operator), and, with the vendor entry points most
# used, as names assembled by `##` token pasting.
_HEAVY = ("matmul", "mm", "addmm", "addmv", "mv", "bmm", "baddbmm", "linear", "einsum", "conv1d",
          "conv2d", "conv3d", "convolution", "softmax", "log_softmax", "layer_norm", "batch_norm",
          "group_norm", "scaled_dot_product_attention", "embedding")
_PASTED = _HEAVY + ("cublasSgemm", "cublasGemmEx", "cublasLtMatmul", "getCurrentCUDABlasHandle",
                    "cudnnConvolutionForward")

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'")
_QUALIFIED = re.compile(r"(?<!\w)(?<!\w::)(\w+)((?:\s*::\s*~?\w+)+)")
_NAMESPACE_ALIAS = re.compile(r"\bnamespace\s+(\w+)\s*=\s*((?:::)?\w+(?:\s*::\s*\w+)*)\s*;")
_USING_NAMESPACE = re.compile(r"\busing\s+namespace\s+(?:::)?(at|torch)((?:\s*::\s*\w+)*)\s*;")
_BARE_CALL = re.compile(r"(?<![\w:\.>])(\w+)\s*\(")
_DEFINITION = r"[\w:<>,\*&\s]+\s[\*&]?\s*{}\s*\([^;{{}}]*\)\s*(?:const\s*)?\{{"

_INSTEAD_ATEN = ("write it in a kernel of your own, or call the torch operator from forward, "
                 "where the default rules only warn and the own-kernel-share rule weighs it "
                 "(--rules allow-libraries makes this rule a warning)")
_INSTEAD_VENDOR = ("write it in a kernel of your own (--rules allow-libraries makes this rule a "
                   "warning; the own-kernel-share rule still applies)")


def _blank(pattern, text):
    """`text` with each match of `pattern` replaced by spaces, newlines kept: offsets stay."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def rule_library_compute(candidate, options):
    findings = []
    inline = [(t, None) for t in candidate.cpp_sources
              if not any(t == f["text"] for f in candidate.source_files)]
    files = [(f["text"], f["path"]) for f in candidate.source_files if f["text"]]
    for text, path in inline + files:
        for offset, message in _library_uses(text):
            if path is None:
                findings.append((string_line(candidate, text, offset), message))
            else:
                line = text.count("\n", 0, offset) + 1
                findings.append((None, f"{Path(path).name}:{line}: {message}"))
    for entry in candidate.source_files:
        if entry["path"] is None:
            findings.append((entry["line"], "load() compiles a source whose path the static check "
                             "cannot work out, so its C++ was not checked; name it with a string "
                             "or os.path.join(os.path.dirname(__file__), ...)", "warn"))
        elif entry["text"] is None:
            findings.append((entry["line"], f"load() compiles {entry['path']}, which cannot be "
                             "read, so its C++ was not checked", "warn"))
    return findings


def _library_uses(text):
    """(offset, message) for each library use in one C++ text."""
    no_comments = _blank(_COMMENT, text)
    found = [(m.start(), f"#include <{m.group(1)}>: a library's compute, not a kernel of yours; "
              f"{_INSTEAD_VENDOR}") for m in _VENDOR_HEADER.finditer(no_comments)
             if not _allowed_header(m.group(1))]
    code = _blank(_INCLUDE, _blank(_STRING, no_comments))
    roots = {"at": ("at",), "torch": ("torch",)}
    for match in _NAMESPACE_ALIAS.finditer(code):
        target = _segments(match.group(2))
        if target and target[0] in roots:
            roots[match.group(1)] = roots[target[0]] + target[1:]
    for match in _QUALIFIED.finditer(code):
        if match.group(1) not in roots:
            continue
        path = roots[match.group(1)] + _segments(match.group(2))
        why = _operator(path)
        if why:
            found.append((match.start(), f"{'::'.join(path)} {why}: it computes inside the "
                          f"extension, not in a kernel of yours; {_INSTEAD_ATEN}"))
    for match in _METHOD_CALL.finditer(code):
        found.append((match.start(1), f".{match.group(1)}() is a tensor method, an ATen "
                      f"operator: it computes inside the extension, not in a kernel of yours; "
                      f"{_INSTEAD_ATEN}"))
    for match in _VENDOR_CALL.finditer(code):
        name = match.group(1)
        if name.endswith("_t"):
            continue  # a type (cublasHandle_t): only calls compute
        library = _LIBRARY_FOR[next(p for p in _VENDOR_PREFIXES if name.startswith(p))]
        found.append((match.start(), f"{name}: {library} computes this, not a kernel of yours; "
                      f"{_INSTEAD_VENDOR}"))
    for match in _VENDOR_HANDLES.finditer(code):
        found.append((match.start(), f"{match.group(1)}: torch's handle for a vendor library; "
                      f"{_INSTEAD_VENDOR}"))
    found.extend(_bare_operators(code))
    found.extend(_pasted(code))
    return found


def _segments(qualified):
    return tuple(s.strip() for s in qualified.split("::") if s.strip())


def _allowed_header(header):
    if not header.startswith("ATen/ops/"):
        return False
    name = header[len("ATen/ops/"):-2]
    return _base(name) in _ALLOWED or _base(name) not in _OPS


def _base(name):
    """The operator a C++ name calls: `mm_out` and `relu_` are `mm` and `relu`."""
    for suffix in ("_outf", "_out", "_symint"):
        if name.endswith(suffix) and name != suffix:
            name = name[: -len(suffix)]
    return name.rstrip("_") or name


def _operator(path):
    """Why `path` (("at", "native", "matmul")) is library compute, or None."""
    root, namespaces, name = path[0], path[1:-1], path[-1]
    if root == "torch" and namespaces[:1] == ("nn",):
        if len(path) > 2 and path[2] not in _NN_ALLOWED:
            return "is a torch::nn layer or function"
        return None
    if any(n in _OPERATOR_NAMESPACES for n in namespaces):
        return f"is an ATen operator implementation ({'::'.join(path[:-1])})"
    if root in ("at", "torch") and namespaces in _OPERATOR_HOMES:
        base = _base(name)
        if base in _OPS and base not in _ALLOWED:
            return "is an ATen operator"
    return None


def _bare_operators(code):
    """After `using namespace at;` (or torch), unqualified operator calls the candidate does not
    define itself. Only the heavy operators: math functions like `exp`, `max` are CUDA's too."""
    if not _USING_NAMESPACE.search(code):
        return []
    found = []
    for match in _BARE_CALL.finditer(code):
        name = match.group(1)
        if name in _HEAVY and not re.search(_DEFINITION.format(re.escape(name)), code):
            found.append((match.start(), f"{name}() is the ATen operator after `using "
                          f"namespace`: it computes inside the extension; {_INSTEAD_ATEN}"))
    return found


def _pasted(code):
    """Operator and library names assembled by `##` token pasting from pieces in the source."""
    if "##" not in code:
        return []
    identifiers = set(re.findall(r"[A-Za-z_]\w*", code))
    return [(code.find("##"), f"{name} assembled by ## token pasting: library compute the rule "
             f"cannot read; {_INSTEAD_ATEN}") for name in _PASTED
            if name not in identifiers and _composable(name, {i for i in identifiers if len(i) > 1})]
