"""A load_inline CUDA unit as two: its device code without torch, its host code without nvcc.

A candidate's `cuda.cu` is a few kernels and the host functions that launch them on torch
tensors. nvcc parses the whole unit, torch's headers included, twice (cudafe++ and cicc) and
its host compiler a third time, though no kernel reads a torch name: after kbench's other cuts
those parses are still most of a cold build's CPU time (docs/architecture.md, "load_inline build
time"). Split, the device unit is the kernels with the unit's other includes and shared
declarations (1-2 s of nvcc), and the host unit is compiled once, by the host compiler alone.

`split(text)` reads the unit's top level, item by item (a preprocessor line, or a declaration up
to its `;` or its function body's `}`), and sorts each:

- device only: `__device__` functions and variables, `__constant__`/`__shared__`/`__managed__`
  variables;
- kernels: `__global__` definitions, whole in the device unit; the host unit gets their
  declaration, which the host compiler reads as an ordinary function: nvcc's host stub for a
  kernel is an ordinary function of the same name and type (what `<<<...>>>` calls, and the
  address the runtime registers), defined in the device unit's object;
- host only: functions without CUDA qualifiers, and anything that names torch, ATen, c10 or
  pybind11 (their includes too);
- both: the other includes, macros, types, constants and `__host__ __device__` functions that
  each object may define (inline, static, constexpr or templates).

In host code, `K<<<CONFIG>>>(ARGS)` becomes what cudafe++ writes for it:
`(__cudaPushCallConfiguration(CONFIG)) ? (void)0 : K(ARGS)`.

A template kernel's instantiations are the ones the host code launches: split_build.py compiles
the host unit first and instantiates in the device unit each one the host object references.

Anything outside that shape raises Unfit, and the unit is built as before: template kernels
the host may instantiate for torch's half, bfloat16 or complex types (the device unit cannot
name them), namespace and `extern "C"` blocks, a
preprocessor conditional around declarations, a quoted include, a launch of a kernel the unit
does not define, a host item naming a device-only one, code that tests `__CUDACC__`. What the
candidate wrote means the same in the two units as in one; a unit the split gets wrong does not
compile (a name its unit lacks), and light_nvcc.py then builds it whole.

Standard library only: light_nvcc.py imports it inside the sandboxed compile worker.
"""

import re
from dataclasses import dataclass, field


class Unfit(Exception):
    """The unit is not one this module splits; the message says why."""


@dataclass
class Split:
    device: str  # the device unit's text
    host: str  # the host unit's text
    kernels: list = field(default_factory=list)  # the kernel names, in order
    templates: list = field(default_factory=list)  # those of template kernels
    launches: int = 0  # the `<<<...>>>` launches rewritten in the host unit


# Includes only the host unit reads: torch's, pybind11's and Python's.
_HOST_INCLUDE = re.compile(r"<\s*(torch|ATen|c10|caffe2|pybind11|THC|THH)/|<\s*Python\.h\s*>")
# A name in torch's namespaces (`at::`, `using namespace torch;`, `namespace py = pybind11;`) or
# one of its macros.
_TORCH_NAME = re.compile(r"\b((torch|at|c10|caffe2|pybind11|py)\s*(::|;)|(TORCH|AT|C10|PYBIND11)_\w+)")
_CUDACC = re.compile(r"\b__(CUDACC|NVCC|CUDACC_RTC)__\b")
_DEVICE_ONLY = {"__device__", "__constant__", "__shared__", "__managed__"}
# Attributes the host compiler does not know (host_defines.h leaves them undefined outside nvcc).
_DEVICE_ATTRIBUTE = re.compile(r"\b__(launch_bounds|maxnreg|cluster_dims|block_size)__\s*(\([^()]*\))?")
_WORD = re.compile(r"[A-Za-z_]\w*")
_TEMPLATE_HEAD = re.compile(r"^\s*template\s*<")
_DEFINED_BOTH = {"inline", "static", "constexpr", "__forceinline__", "__inline__"}

# Headers torch's own include brings into the unit (torch/types.h includes all of them, and
# c10's Half.h and BFloat16.h include CUDA's fp16 and bf16 headers under nvcc): a kernel may use
# what they declare without including them, so the device unit, which drops torch's include,
# includes them in its place where the unit included torch. It declares nothing the whole unit
# did not.
_TORCH_BRINGS = ("cstdint", "cstddef", "cmath", "cfloat", "climits", "limits", "algorithm",
                 "type_traits", "utility", "cstdio", "cstdlib", "cstring", "vector", "array",
                 "string", "memory", "tuple", "functional")
_TORCH_BRINGS_CUDA = ("cuda_fp16.h", "cuda_bf16.h")
_NAMES_HALF = re.compile(r"half|bf16|bfloat16")
# torch's half, bfloat16 and complex types, which the device unit cannot name: a template kernel
# instantiated for one (AT_DISPATCH_FLOATING_TYPES_AND_HALF, ...) would not compile there.
_REDUCED_TYPES = re.compile(r"Half|HALF|BFloat16|BFLOAT16|Complex|COMPLEX|AND2|AND3|REDUCED")

PUSH = ("extern \"C\" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim = 1, "
        "size_t sharedMem = 0, struct CUstream_st *stream = 0);\n")


def mask(text):
    """`text` with comments and the insides of string and character literals blanked (newlines
    kept), so brackets, `;` and `#` in `mask(text)` are the code's own; offsets are unchanged."""
    out = list(text)
    i, n = 0, len(text)

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise Unfit("an unterminated comment")
            blank(i, end + 2)
            i = end + 2
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            paren = text.find("(", i + 2)
            if paren < 0:
                raise Unfit("a malformed raw string")
            close = ")" + text[i + 2:paren] + '"'
            end = text.find(close, paren)
            if end < 0:
                raise Unfit("an unterminated raw string")
            blank(i + 1, end + len(close))
            i = end + len(close)
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and text[i - 1 : i + 2] != "u8'":
                i += 1  # a digit separator (1'000'000)
                continue
            k = i + 1
            while k < n and text[k] != c:
                if text[k] == "\\":
                    k += 1
                elif text[k] == "\n":
                    raise Unfit("an unterminated literal")
                k += 1
            blank(i + 1, k)
            i = k + 1
        else:
            i += 1
    return "".join(out)


_OPEN, _CLOSE = "([{", ")]}"


def _match(code, start):
    """The offset just past the bracket that closes the one at `start`."""
    depth = 0
    for k in range(start, len(code)):
        c = code[k]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return k + 1
    raise Unfit("unbalanced brackets")


def _line_end(code, start):
    """The end of the preprocessor line at `start`, continuation lines included."""
    k = start
    while True:
        end = code.find("\n", k)
        if end < 0:
            return len(code)
        if code[end - 1 : end] != "\\":
            return end + 1
        k = end + 1


@dataclass
class Item:
    start: int
    end: int
    code: str  # the masked text
    body: int = -1  # offset (in the unit) of a function body's `{`, or -1
    pp: bool = False


def items(text, code):
    """The unit's top-level items, in order."""
    out, i, n = [], 0, len(code)
    while i < n:
        if code[i].isspace():
            i += 1
            continue
        if code[i] == "#":
            end = _line_end(code, i)
            out.append(Item(i, end, code[i:end], pp=True))
            i = end
            continue
        start, body = i, -1
        while True:
            if i >= n:
                raise Unfit("a declaration without its end")
            c = code[i]
            if c == "#" and code[code.rfind("\n", 0, i) + 1 : i].strip() == "":
                raise Unfit("a preprocessor line inside a declaration")
            if c == ";":
                i += 1
                break
            if c in "([":
                i = _match(code, i)
                continue
            if c in ")]}":
                raise Unfit("unbalanced brackets")
            if c == "{":
                head = code[start:i]
                words = set(_WORD.findall(head))
                if "namespace" in words or words == {"extern"}:  # `extern "C" {`: the string is masked
                    raise Unfit("a namespace or linkage block")
                i = _match(code, i)
                if words & {"struct", "class", "union", "enum"} and "(" not in head or "=" in head.split("(")[0]:
                    continue  # a type or an initializer: the item ends at its `;`
                body = start + len(head)
                break
            i += 1
        out.append(Item(start, i, code[start:i], body=body))
    return out


def _words(code):
    return set(_WORD.findall(code))


def _name_before_paren(head):
    """The declared name: the identifier before the parameter list's `(`."""
    head = _DEVICE_ATTRIBUTE.sub(" ", head)
    paren = head.find("(")
    if paren < 0:
        return None
    before = _WORD.findall(head[:paren])
    return before[-1] if before else None


def _variable_names(code):
    """Names a namespace-scope variable declaration declares (`T a[4], b = 1;` gives a, b)."""
    names, depth, declarator = [], 0, []
    for c in code.rstrip().rstrip(";") + ",":
        depth += c in _OPEN
        depth -= c in _CLOSE
        if c == "," and depth == 0:
            words = _WORD.findall(re.split(r"[\[=({]", "".join(declarator), maxsplit=1)[0])
            if words:
                names.append(words[-1])
            declarator = []
        else:
            declarator.append(c)
    return names


def _classify(item, text):
    """'conditional', 'both', 'host', 'device', 'kernel' or 'template kernel' for one item."""
    code = item.code
    if item.pp:
        directive = re.match(r"#\s*(\w*)", code).group(1)
        if directive == "include":
            if _HOST_INCLUDE.search(code):
                return "host"
            if '"' in text[item.start:item.end] and "<" not in code:
                raise Unfit("a quoted include")
            return "both"
        if _CUDACC.search(code):
            raise Unfit("a preprocessor test of nvcc")
        return "conditional" if directive in ("if", "ifdef", "ifndef", "elif", "else", "endif") else "both"
    head = code if item.body < 0 else code[: item.body - item.start]
    head_words = _words(head)
    template = bool(_TEMPLATE_HEAD.match(head))
    if "__global__" in head_words:
        if "static" in head_words:
            raise Unfit("a static kernel")
        if item.body < 0:
            return "both"
        return "template kernel" if template else "kernel"
    if head_words & _DEVICE_ONLY and "__host__" not in head_words:
        return "device"
    if _TORCH_NAME.search(code):
        return "host"
    if "__host__" in head_words and "__device__" in head_words:
        if item.body >= 0 and not template and not head_words & _DEFINED_BOTH:
            raise Unfit("a __host__ __device__ function with external linkage")
        return "both"
    if "__host__" in head_words:
        return "host"
    if item.body >= 0:
        return "both" if "constexpr" in head_words else "host"
    first = (_WORD.findall(_TEMPLATE_HEAD.sub("", head) if template else head) or [""])[0]
    if first in ("struct", "class", "union", "enum", "typedef", "using", "static_assert"):
        return "both"
    if "(" in head.split("=")[0] and "=" not in head.split("(")[0]:
        return "both"  # a function's declaration
    if head_words & {"const", "constexpr"}:
        return "both"  # a constant: internal linkage, so each object may have its own
    return "host"


def _kernel_declaration(text, item):
    head = text[item.start : item.body]
    return _DEVICE_ATTRIBUTE.sub(" ", head).rstrip() + ";\n"


def _callee(code, at):
    """(start, name) of the kernel before a `<<<` at `at`: `name` or `name<ARGS>`."""
    k = at
    while k > 0 and code[k - 1].isspace():
        k -= 1
    if k > 0 and code[k - 1] == ">":
        depth = 0
        while k > 0:
            k -= 1
            depth += {">": 1, "<": -1}.get(code[k], 0)
            if depth == 0:
                break
        if depth:
            return None
        while k > 0 and code[k - 1].isspace():
            k -= 1
    name = re.search(r"([A-Za-z_]\w*)$", code[:k])
    return (name.start(), name.group(1)) if name else None


def _rewrite_launches(text, code, kernels):
    """`text` (one host item) with each `K<<<CONFIG>>>(ARGS)` as cudafe++ writes it."""
    out, last, count = [], 0, 0
    for m in re.finditer(r"<<<", code):
        if m.start() < last:
            continue
        callee = _callee(code, m.start())
        if callee is None or callee[1] not in kernels:
            raise Unfit("a launch of a kernel the unit does not define")
        if re.search(r"(::|\.|->)\s*$", code[: callee[0]]):
            raise Unfit("a launch of a qualified kernel name")
        close, depth, k = -1, 0, m.end()
        while k < len(code):
            if code[k] in _OPEN:
                depth += 1
            elif code[k] in _CLOSE:
                depth -= 1
            elif depth == 0 and code.startswith(">>>", k):
                close = k
                break
            k += 1
        if close < 0:
            raise Unfit("a launch without its >>>")
        paren = close + 3
        while paren < len(code) and code[paren].isspace():
            paren += 1
        if paren >= len(code) or code[paren] != "(":
            raise Unfit("a launch without its arguments")
        end = _match(code, paren)
        name = text[callee[0] : m.start()].rstrip()
        config = text[m.end() : close]
        arguments = text[paren + 1 : end - 1]
        out.append(text[last : callee[0]])
        out.append(f"((__cudaPushCallConfiguration({config})) ? (void)0 : {name}({arguments}))")
        last, count = end, count + 1
    out.append(text[last:])
    return "".join(out), count


def split(text, path):
    """The unit as a Split, or Unfit. `path` names the source in the `#line` directives, so the
    two units' diagnostics point at the candidate's own lines."""
    code = mask(text)
    if "<<<" not in code:
        raise Unfit("no kernel launch")
    units = items(text, code)
    sorted_items, conditional_depth = [], 0
    for item in units:
        kind = _classify(item, text)
        if kind == "conditional":
            directive = re.match(r"#\s*(\w*)", item.code).group(1)
            conditional_depth += {"if": 1, "ifdef": 1, "ifndef": 1, "endif": -1}.get(directive, 0)
            kind = "both"
        elif conditional_depth and not item.pp:
            raise Unfit("a preprocessor conditional around declarations")
        sorted_items.append((item, kind))
    kernels, templates = [], []
    for item, kind in sorted_items:
        if kind in ("kernel", "template kernel"):
            kernels.append(_name_before_paren(item.code[: item.body - item.start]))
            if kind == "template kernel":
                templates.append(kernels[-1])
    if not kernels or None in kernels:
        raise Unfit("no kernel definition")
    if templates and _REDUCED_TYPES.search(code):
        raise Unfit("a template kernel that may be instantiated for torch's own types")
    device_names = set()
    for item, kind in sorted_items:
        if kind == "device":
            head = item.code if item.body < 0 else item.code[: item.body - item.start]
            name = _name_before_paren(head) if item.body >= 0 or "(" in head.split("=")[0] else None
            device_names.update([name] if name else _variable_names(head))
    device, host, launches = [], [], 0
    if any(kind == "host" and item.pp for item, kind in sorted_items):
        brought = _TORCH_BRINGS + (_TORCH_BRINGS_CUDA if _NAMES_HALF.search(code) else ())
        device.append("".join(f"#include <{name}>\n" for name in brought))
    host.append("#include <cuda_runtime.h>\n" + PUSH)
    for item, kind in sorted_items:
        piece = text[item.start : item.end]
        line = f'#line {text.count(chr(10), 0, item.start) + 1} "{path}"\n'
        if kind == "template kernel":
            kind = "kernel"
        if kind in ("both", "device", "kernel"):
            if kind != "both" or not item.pp:
                device.append(line)
            device.append(piece if piece.endswith("\n") else piece + "\n")
        if kind in ("both", "host", "kernel"):
            if kind == "kernel":
                piece = _kernel_declaration(text, item)
            elif kind == "host" and not item.pp:
                if _CUDACC.search(item.code):
                    raise Unfit("host code that tests nvcc")
                if _words(item.code) & device_names:
                    raise Unfit("host code that names a device-only declaration")
                piece, count = _rewrite_launches(piece, item.code, set(kernels))
                launches += count
            elif "<<<" in item.code:
                raise Unfit("a launch outside host code")
            if not item.pp:
                host.append(line)
            host.append(piece if piece.endswith("\n") else piece + "\n")
    return Split("".join(device), "".join(host), kernels, templates, launches)
