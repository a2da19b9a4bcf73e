"""The candidate's own kernels, by name, read from its source: CUDA `__global__` functions and
Triton `@triton.jit` functions. Every other kernel a call launches is torch's or a vendor
library's. The names decide the own-kernel share of GPU time, the integrity check that the
candidate's kernels ran at all, the counters' `own` mark and which functions `kbench
disassemble` keeps, so a kernel missed here is a candidate graded as if it had cheated."""

import re
from pathlib import Path

# Launch attributes may stand before or after the return type (`__global__ void
# __launch_bounds__(256) k(` is as common as `__global__ __launch_bounds__(256) void k(`), and
# their arguments may hold parentheses of their own; they are removed before names are read.
_LAUNCH_ATTRIBUTE = re.compile(
    r"\b(?:__launch_bounds__|__maxnreg__|__cluster_dims__|__block_size__)\s*"
    r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
)
_CUDA_KERNEL = re.compile(r"\b__global__\s+(?:[\w:<>,\s\*&]+?\s+)?(\w+)\s*\(")
_TRITON_KERNEL = re.compile(r"@triton\.jit\b[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)")
_NOT_NAMES = {"void", "__global__", "__noinline__", "__forceinline__"}


def own_kernel_names_in(text: str) -> list:
    """The kernel names defined in one source text, sorted."""
    cuda = _LAUNCH_ATTRIBUTE.sub(" ", text)
    names = set(_CUDA_KERNEL.findall(cuda)) | set(_TRITON_KERNEL.findall(text))
    return sorted(names - _NOT_NAMES)


def own_kernel_names(path) -> list:
    """The kernel names defined in the candidate file at `path` and in the source files its
    `cpp_extension.load(sources=...)` compiles (none without a path)."""
    if not path:
        return []
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    names = set(own_kernel_names_in(text))
    for loaded in _loaded_sources(text, path):
        names |= set(own_kernel_names_in(loaded))
    return sorted(names)


def _loaded_sources(text, path):
    """The texts of the files load() compiles, as the static check reads them."""
    import ast

    from .static_analysis import Candidate

    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError:
        return []
    return [f["text"] for f in Candidate(tree, text, str(path)).source_files if f["text"]]
