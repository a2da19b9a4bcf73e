"""The mixed batch bench/throughput evaluates: every bundled KernelBench-format problem of levels
1-3 (problems/level1..3), each with three candidates a kernel-writing agent could submit:

- `ok`: the problem's own forward, its outputs passed through a CUDA copy kernel of the
  candidate's own (a real kernel over the whole output, so both harnesses run a load_inline
  build and a launch);
- `wrong`: the same, but the kernel leaves the first half of each output's bytes zero;
- `crash`: the kernel writes through a null pointer (an illegal-address fault in the process).

Every candidate file carries its problem's code, so no two are alike, and both flows key a
build by the whole candidate file (kbench's compile cache, KernelBench's precompile by
source_sha): from a fresh cache the batch is one build per candidate in either flow. The CUDA
source inside is the same for each kind, except the `ok` candidates of the first FRESH
problems, whose extension names differ. The batch is written as files, KernelBench's format, so
both harnesses read the same candidates."""

import ast
import hashlib
import json
import random
import re
from pathlib import Path

KINDS = ("ok", "wrong", "crash")
FRESH = 6

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void KERNEL(const unsigned char* in, unsigned char* out, long n, long zero_below) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    BODY
  }
}

torch::Tensor copy_out(torch::Tensor x) {
  auto c = x.contiguous();
  auto o = torch::empty_like(c);
  const long n = c.numel() * (long)c.element_size();
  if (n > 0) {
    const long blocks = std::min<long>((n + 255) / 256, 65535L * 8);
    KERNEL<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        (const unsigned char*)c.data_ptr(), (unsigned char*)o.data_ptr(), n, ZERO_BELOW);
  }
  return o;
}
"""

_BODY = {
    "ok": "out[i] = in[i];",
    "wrong": "out[i] = i < zero_below ? 0 : in[i];",
    "crash": "((unsigned char*)0x10)[i] = in[i];",
}

_CANDIDATE = '''

# ---- candidate (bench/throughput/batch.py): the reference's forward, outputs copied by a kernel
from torch.utils.cpp_extension import load_inline as _load_inline

_ext = _load_inline(
    name="{name}",
    cpp_sources="torch::Tensor copy_out(torch::Tensor x);",
    cuda_sources=r"""{cuda}""",
    functions=["copy_out"],
    verbose=False,
)


def _copied(value):
    if isinstance(value, torch.Tensor):
        return _ext.copy_out(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_copied(v) for v in value)
    return value


'''

_FORWARD = """
    def forward(self, *args, **kwargs):
        return _copied(self._reference_forward(*args, **kwargs))
"""


def _model_new(problem_text: str) -> str:
    """The problem's Model class as ModelNew (its own copy: subclassing the reference is
    rejected as reference reuse), with forward renamed and wrapped by the copy kernel."""
    tree = ast.parse(problem_text)
    model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
    lines = problem_text.splitlines()
    body = "\n".join(lines[model.lineno - 1 - len(model.decorator_list): model.end_lineno])
    body = re.sub(r"\bModel\b", "ModelNew", body)
    body = re.sub(r"\bdef forward\(", "def _reference_forward(", body)
    return body + "\n" + _FORWARD


def problems(root: Path) -> list:
    """The bundled problems of levels 1-3, in a stable order."""
    found = []
    for level in ("level1", "level2", "level3"):
        found += sorted((root / "problems" / level).glob("*.py"), key=lambda p: (len(p.name), p.name))
    return found


def candidate_source(problem_text: str, kind: str, name: str) -> str:
    kernel = f"{name}_kernel"
    cuda = _CUDA.replace("KERNEL", kernel).replace("BODY", _BODY[kind])
    cuda = cuda.replace("ZERO_BELOW", "n / 2" if kind == "wrong" else "0")
    return (problem_text.rstrip() + "\n" + _CANDIDATE.format(name=name, cuda=cuda) + "\n"
            + _model_new(problem_text))


def write_batch(root: Path, out: Path, seed: int = 0) -> list:
    """Writes the candidates under `out` and returns the batch as a list of entries
    {problem, candidate, kind, fresh}, shuffled with `seed` so that any prefix mixes the kinds
    and the problems."""
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for index, problem in enumerate(problems(root)):
        text = problem.read_text()
        for kind in KINDS:
            fresh = kind == "ok" and index < FRESH
            name = f"kbt_{kind}" + (f"_{index}" if fresh else "")
            source = candidate_source(text, kind, name)
            stem = f"{problem.parent.name}_{problem.stem}_{kind}"
            path = out / f"{stem}.py"
            path.write_text(source)
            entries.append({"problem": str(problem.resolve()), "candidate": str(path.resolve()),
                            "kind": kind, "fresh": fresh,
                            "source_sha": hashlib.sha256(source.encode()).hexdigest()[:16]})
    random.Random(seed).shuffle(entries)
    (out / "batch.json").write_text(json.dumps(entries, indent=1))
    return entries
