"""The static rules (python/kbench/worker/static_check.py, docs/static-checks.md): each rule
fires on its construct at the right line, stays quiet on legitimate code, and is not dodged by
the easy evasions of the exploit catalogue (aliases, getattr, token pasting)."""

import json
import textwrap
from pathlib import Path

import pytest

from kbench.worker.static_check import RuleSetError, analyse, check_source, load_rule_set

REPO = Path(__file__).resolve().parents[2]

# A minimal legitimate CUDA candidate the snippets below are spliced into.
CUDA_HEADER = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
__global__ void k(const float* x, float* y, long n) { long i = threadIdx.x; if (i < n) y[i] = x[i]; }
torch::Tensor run(torch::Tensor x) { auto y = torch::empty_like(x); k<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel()); return y; }
"""
_ext = load_inline(name="t", cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=_CUDA, functions=["run"])
'''
HEADER_LINES = CUDA_HEADER.count("\n")


def candidate(body, header=CUDA_HEADER):
    return header + textwrap.dedent(body)


def verdicts(source, **kwargs):
    return check_source(source, "cand.py", **kwargs)


def fired(source, rule, **kwargs):
    return [v for v in verdicts(source, **kwargs) if v["rule"] == rule]


def line_of(source, needle):
    return next(i for i, text in enumerate(source.splitlines(), 1) if needle in text)


CLEAN = candidate('''
class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous().view(-1)
        out = torch.empty_like(x)
        return _ext.run(x).reshape(out.shape)
''')


def test_clean_candidate_has_no_verdicts():
    assert verdicts(CLEAN) == []


# ---------------------------------------------------------------- positives: (rule, snippet, marker)

POSITIVES = [
    ("torch-compute-in-forward", "        return torch.matmul(x, x)  # HIT\n"),
    ("torch-compute-in-forward", "        return x.sum()  # HIT\n"),
    ("torch-compute-in-forward", "        return x @ x  # HIT\n"),
    ("torch-compute-in-forward", "        return self.helper(x)\n    def helper(self, x):\n        return torch.softmax(x, 0)  # HIT\n"),
    ("reference-reuse", "        return Model()(x)  # HIT\n"),
    ("fallback", "        try:  # HIT\n            return _ext.run(x)\n        except Exception:\n            return x\n"),
    ("fallback", "        if x.is_cuda:  # HIT\n            return torch.relu(x)\n        return _ext.run(x)\n"),
    ("patching", "        torch.cuda.synchronize = lambda: None  # HIT\n        return _ext.run(x)\n"),
    ("patching", "        setattr(torch.cuda.Event, 'elapsed_time', None)  # HIT\n        return _ext.run(x)\n"),
    ("patching", "        self.forward.__code__ = None  # HIT\n        return _ext.run(x)\n"),
    ("concurrency-and-io", "        open('/tmp/x').read()  # HIT\n        return _ext.run(x)\n"),
    ("concurrency-and-io", "        os.system('ls')  # HIT\n        return _ext.run(x)\n"),
    ("introspection", "        f = sys._getframe()  # HIT\n        return _ext.run(x)\n"),
    ("introspection", "        g = sys._getframe().f_back  # HIT\n        return _ext.run(x)\n"),
    ("stream-without-join", "        s = torch.cuda.Stream()  # HIT\n        return _ext.run(x)\n"),
    ("lazy-output", "        return _ext.run(x)\n    def __torch_function__(self, *a):  # HIT\n        return None\n"),
    ("precision-downgrade", "        return _ext.run(x.half())  # HIT\n"),
    ("shape-specialised", "        if x.shape[0] == 4096:  # HIT\n            pass\n        return _ext.run(x)\n"),
]


@pytest.mark.parametrize("rule,snippet", POSITIVES, ids=[f"{r}-{i}" for i, (r, _) in enumerate(POSITIVES)])
def test_rule_fires_at_its_line(rule, snippet):
    source = candidate("import os\nimport sys\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n") + snippet
    hits = fired(source, rule)
    assert hits, verdicts(source)
    assert line_of(source, "# HIT") in [v["line"] for v in hits]
    assert all(v["message"] for v in hits)


@pytest.mark.parametrize("rule,module", [("concurrency-and-io", "threading"),
                                         ("concurrency-and-io", "subprocess"),
                                         ("concurrency-and-io", "concurrent.futures"),
                                         ("introspection", "gc"), ("introspection", "ctypes"),
                                         ("introspection", "inspect")])
def test_banned_imports(rule, module):
    source = candidate(f"import {module}\n") + CLEAN[len(CUDA_HEADER):]
    hits = fired(source, rule)
    assert [v["line"] for v in hits] == [HEADER_LINES + 1]
    assert all(v["severity"] == "reject" for v in hits)


def test_reference_subclass_and_import():
    source = candidate("from problem import Model\n\nclass ModelNew(Model):\n    pass\n")
    lines = sorted(v["line"] for v in fired(source, "reference-reuse"))
    assert lines == [HEADER_LINES + 1, HEADER_LINES + 3]


def test_nn_layer_called_in_forward():
    source = candidate('''
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
''')
    assert [v["line"] for v in fired(source, "torch-compute-in-forward")] == [line_of(source, "self.fc(x)")]


def test_nn_layer_parameters_used_by_the_kernel_are_fine():
    source = candidate('''
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return _ext.run(x, self.fc.weight.contiguous())
''')
    assert fired(source, "torch-compute-in-forward") == []


def test_cpp_stream_creation_without_join_rejects_and_with_join_warns():
    base = CUDA_HEADER.replace("k<<<1, 32>>>", "cudaStream_t s; cudaStreamCreate(&s); k<<<1, 32, 0, s>>>")
    source = candidate("class ModelNew(nn.Module):\n    def forward(self, x):\n        return _ext.run(x)\n", base)
    hits = fired(source, "stream-without-join")
    assert [v["severity"] for v in hits] == ["reject"]
    assert hits[0]["line"] == line_of(source, "cudaStreamCreate")
    joined = source.replace("return y; }", "cudaStreamSynchronize(s); return y; }")
    assert [v["severity"] for v in fired(joined, "stream-without-join")] == ["warn"]


def test_python_side_stream_waiting_on_the_caller_is_not_a_join():
    source = candidate('''
class ModelNew(nn.Module):
    def forward(self, x):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        return _ext.run(x)
''')
    assert [v["severity"] for v in fired(source, "stream-without-join")] == ["reject"]
    joined = source.replace("return _ext.run(x)", "y = _ext.run(x)\n        torch.cuda.current_stream().wait_stream(side)\n        return y")
    assert [v["severity"] for v in fired(joined, "stream-without-join")] == ["warn"]


def test_tensor_subclass_and_make_subclass():
    source = candidate("class Lazy(torch.Tensor):\n    pass\n\nt = torch.Tensor._make_subclass\n")
    assert sorted(v["line"] for v in fired(source, "lazy-output")) == [HEADER_LINES + 1, HEADER_LINES + 4]


def test_cpp_half_intrinsics_warn():
    base = CUDA_HEADER.replace("y[i] = x[i];", "y[i] = __half2float(__float2half(x[i]));")
    source = candidate("class ModelNew(nn.Module):\n    def forward(self, x):\n        return _ext.run(x)\n", base)
    hits = fired(source, "precision-downgrade")
    assert hits and all(v["severity"] == "warn" for v in hits)
    assert {v["line"] for v in hits} == {line_of(source, "__global__")}


# ---------------------------------------------------------------- kernel required per backend


def test_kernel_required_cuda_without_global():
    source = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n"
    hits = fired(source, "kernel-required", backend="cuda")
    assert [v["line"] for v in hits] == [4] and "__global__" in hits[0]["message"]


def test_kernel_required_triton():
    source = "import triton\nimport torch.nn as nn\n\n@triton.jit\ndef k(x):\n    pass\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        k[(1,)](x)\n        return x\n"
    assert analyse(source, "c.py")["backend"] == "triton"
    assert fired(source, "kernel-required") == []
    assert fired(source.replace("@triton.jit\n", ""), "kernel-required", backend="triton")
    decoy = fired(source.replace("        k[(1,)](x)\n", ""), "kernel-required")
    assert decoy and "never uses the @triton.jit function" in decoy[0]["message"]


# KernelBench's own prompt examples in CUTLASS's CuTe DSL and in TileLang (shapes of
# src/kernelbench/prompts/model_new_ex_add_cute.py and model_new_ex_add_tilelang.py).
CUTE = """\
import torch
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    gC[tidx] = gA[tidx] + gB[tidx]

@cute.jit
def add_host(mA, mB, mC):
    add_kernel(mA, mB, mC).launch(grid=[1, 1, 1], block=[128, 1, 1])

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        c = torch.empty_like(a)
        add_host(from_dlpack(a), from_dlpack(b), from_dlpack(c))
        return c
"""

TILELANG = """\
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

def build(M, N, block_M=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]
    return tilelang.compile(main, out_idx=[2])

class ModelNew(nn.Module):
    def forward(self, A, B):
        kernel = build(*A.shape)
        return kernel(A, B)
"""


@pytest.mark.parametrize("source, backend", [(CUTE, "cute"), (TILELANG, "tilelang")])
def test_kernel_required_python_kernel_languages(source, backend):
    result = analyse(source, "c.py")
    assert result["backend"] == backend
    assert [v for v in result["verdicts"] if v["severity"] == "reject"] == []
    # Without its kernel decorators the candidate has no kernel of that backend.
    bare = source.replace("@cute.kernel\n", "").replace("@cute.jit\n", "").replace("    @T.prim_func\n", "")
    assert analyse(bare, "c.py")["backend"] == "cpu"
    hits = fired(bare, "kernel-required", backend=backend)
    assert hits and "none was found" in hits[0]["message"]


def test_a_cute_host_function_alone_is_not_a_kernel():
    no_device = CUTE.replace("@cute.kernel\n", "")
    assert analyse(no_device, "c.py")["backend"] == "cute"
    hits = fired(no_device, "kernel-required")
    assert hits and "@cute.kernel" in hits[0]["message"]


def test_kernel_required_cpu():
    cpu = REPO / "examples/cpu/level1_relu.py"
    assert fired(cpu.read_text(), "kernel-required", backend="cpu") == []
    assert fired(cpu.read_text(), "kernel-required", backend="cuda")


# ---------------------------------------------------------------- negatives


def test_allowed_torch_calls_in_forward():
    source = candidate('''
import torch.distributed as dist
class ModelNew(nn.Module):
    def forward(self, x):
        n, d = x.shape
        y = torch.empty((n, d), dtype=x.dtype, device=x.device)
        z = torch.zeros_like(x).copy_(x)
        if dist.is_initialized():
            dist.all_reduce(z)
        stream = torch.cuda.current_stream()
        w = x.permute(1, 0).contiguous().view(d, n).t().unsqueeze(0).squeeze(0)
        return _ext.run(w.float().to(x.device)).reshape(n, d).narrow(0, 0, n)
''')
    assert [v for v in verdicts(source) if v["severity"] == "reject"] == []


def test_torch_compute_outside_forward_is_fine():
    source = candidate('''
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4).softmax(0))
    def forward(self, x):
        return _ext.run(x)
''')
    assert fired(source, "torch-compute-in-forward") == []


def test_extension_functions_named_like_torch_ops_are_kernels():
    source = candidate("class ModelNew(nn.Module):\n    def forward(self, x):\n        return _ext.softmax(x)\n")
    assert fired(source, "torch-compute-in-forward") == []


def test_os_environ_read_is_fine():
    source = candidate("import os\nDEBUG = os.environ.get('X')\n") + CLEAN[len(CUDA_HEADER):]
    assert fired(source, "concurrency-and-io") == []


# ---------------------------------------------------------------- evasions


@pytest.mark.parametrize("prelude,call", [
    ("import torch.nn.functional as F\n", "F.conv2d(x, x)"),
    ("from torch import matmul as mm\n", "mm(x, x)"),
    ("from torch.nn import functional as G\n", "G.relu(x)"),
    ("mm = torch.matmul\n", "mm(x, x)"),
    ("", "getattr(torch, 'mat' + 'mul')(x, x)"),
    ("", "torch.ops.aten.mm(x, x)"),
    ("", "x.__matmul__(x)"),
])
def test_aliases_do_not_hide_torch_compute(prelude, call):
    source = candidate(prelude + f"\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return {call}  # HIT\n")
    hits = fired(source, "torch-compute-in-forward")
    assert line_of(source, "# HIT") in [v["line"] for v in hits], verdicts(source)


def test_aliased_module_patching():
    source = candidate("from torch import cuda as c\nc.synchronize = None\n") + CLEAN[len(CUDA_HEADER):]
    assert [v["line"] for v in fired(source, "patching")] == [HEADER_LINES + 2]


def test_sys_modules_patching():
    source = candidate("import sys\nsys.modules['kbench.worker.timing'].time_block = None\n") + CLEAN[len(CUDA_HEADER):]
    assert [v["line"] for v in fired(source, "patching")] == [HEADER_LINES + 2]


def test_dynamic_import_of_threading():
    source = candidate("t = __import__('thread' + 'ing')\n") + CLEAN[len(CUDA_HEADER):]
    assert fired(source, "concurrency-and-io")


def test_token_pasting_stream_creation():
    base = CUDA_HEADER.replace(
        '_CUDA = r"""\n',
        '_CUDA = r"""\n#define CAT(a, b) a##b\nstatic void side() { cudaStream_t s; CAT(cudaStream, CreateWithFlags)(&s, 1); }\n')
    source = candidate("class ModelNew(nn.Module):\n    def forward(self, x):\n        return _ext.run(x)\n", base)
    hits = fired(source, "stream-without-join")
    assert hits and hits[0]["severity"] == "reject" and "token pasting" in hits[0]["message"]


def test_cuda_source_split_across_string_concatenation():
    base = CUDA_HEADER.replace('_CUDA = r"""', '_PART = "cudaStream" + "Create(&s);"\n_CUDA = _PART + r"""')
    source = candidate("class ModelNew(nn.Module):\n    def forward(self, x):\n        return _ext.run(x)\n", base)
    assert fired(source, "stream-without-join")


# ---------------------------------------------------------------- problem constants


def test_shape_literals_equal_to_problem_constants(tmp_path):
    problem = tmp_path / "p.py"
    problem.write_text("N = 8192\nM = 1\n")
    base = CUDA_HEADER.replace("long i = threadIdx.x;", "if (n == 8192) return; long i = threadIdx.x;")
    source = candidate("class ModelNew(nn.Module):\n    def forward(self, x):\n        return _ext.run(x)\n", base)
    hits = fired(source, "shape-specialised", problem=str(problem))
    assert hits and "the problem's N" in hits[0]["message"] and hits[0]["severity"] == "warn"
    assert fired(source, "shape-specialised") == []


# ---------------------------------------------------------------- rule sets


def test_torch_compute_warns_by_default_and_rejects_under_strict():
    source = candidate("class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(_ext.run(x))\n")
    assert [v["severity"] for v in fired(source, "torch-compute-in-forward")] == ["warn"]
    assert [v["severity"] for v in fired(source, "torch-compute-in-forward", rules="partial-torch")] == ["warn"]
    assert [v["severity"] for v in fired(source, "torch-compute-in-forward", rules="strict")] == ["reject"]


def test_unknown_rule_id_names_the_file_and_the_id(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "bad", "rules": {"no-such-rule": {"severity": "reject"}}}))
    with pytest.raises(RuleSetError) as error:
        load_rule_set(str(bad))
    assert str(bad) in str(error.value) and "no-such-rule" in str(error.value)


def test_bad_severity_and_option(tmp_path):
    for rules in ({"fallback": {"severity": "fatal"}}, {"fallback": {"severity": "warn", "x": 1}}):
        path = tmp_path / "r.json"
        path.write_text(json.dumps({"name": "r", "rules": rules}))
        with pytest.raises(RuleSetError, match="fallback"):
            load_rule_set(str(path))


def test_rule_off_is_silent(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"name": "r", "extends": "default", "rules": {"fallback": {"severity": "off"}}}))
    source = candidate("class ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n            return _ext.run(x)\n        finally:\n            pass\n")
    assert fired(source, "fallback", rules=str(path)) == []


def test_bundled_rule_sets_load():
    for path in (REPO / "python/kbench/rules").glob("*.json"):
        assert load_rule_set(str(path))["rules"]


# ---------------------------------------------------------------- false positives

EXAMPLES = sorted((REPO / "examples/cuda").glob("*.py")) + sorted((REPO / "examples/cpu").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[f"{p.parent.name}/{p.name}" for p in EXAMPLES])
def test_examples_are_not_rejected(path):
    result = analyse(path.read_text(), str(path))
    assert [v for v in result["verdicts"] if v["severity"] == "reject"] == []
    # cuda/ holds the GPU candidates, CUDA C++ and Triton alike; cpu/ the C++ ones.
    assert result["backend"] in {"cuda": ("cuda", "triton"), "cpu": ("cpu",)}[path.parent.name]


def test_handler_keeps_the_old_request_shape():
    from kbench.worker.handlers import _static_check

    answer = _static_check({"candidate": str(REPO / "examples/cuda/level1_relu.py")})
    assert answer["ok"] and answer["verdicts"] == [] and answer["backend"] == "cuda"
    assert answer["rule_set"] == "default"
