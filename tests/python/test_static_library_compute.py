"""Library reuse through the extension, and KernelBench's policy on partial replacement (issue 14,
items 4 and 5; docs/static-checks.md): `library-compute` rejects ATen and vendor-library compute
in the C++ a candidate compiles and keeps allocation and metadata allowed; `kernel-required`
rejects a candidate whose forward never uses its own kernel; torch compute in forward is a
warning by default and a reject under `strict`; a rule set carries the dynamic own-kernel-share
rule to the orchestrator."""

import json
import textwrap
from pathlib import Path

import pytest

from kbench.worker.own_kernels import own_kernel_names
from kbench.worker.static_check import RuleSetError, analyse, check_source, load_rule_set

REPO = Path(__file__).resolve().parents[2]
MNIST2 = REPO / "tests/e2e/candidates/kernelbench_mnist2_new.py"


def cuda_candidate(cpp_body, forward="return _ext.run(x)", prelude=""):
    """A CUDA candidate whose host function runs `cpp_body` (C++ statements) after a kernel
    launch; `# HIT` marks the line a verdict must point at."""
    return textwrap.dedent('''\
        import torch
        import torch.nn as nn
        from torch.utils.cpp_extension import load_inline
        {prelude}
        _CUDA = r"""
        #include <torch/extension.h>
        #include <ATen/cuda/CUDAContext.h>
        __global__ void k(const float* x, float* y, long n) {{ long i = threadIdx.x; if (i < n) y[i] = x[i]; }}
        torch::Tensor run(torch::Tensor x) {{
            auto y = torch::empty_like(x);
            k<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
        {body}
            return y;
        }}
        """
        _ext = load_inline(name="t", cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=_CUDA, functions=["run"])

        class ModelNew(nn.Module):
            def forward(self, x):
                {forward}
        ''').format(prelude=prelude, body=textwrap.indent(textwrap.dedent(cpp_body), "    "),
                    forward=forward)


def fired(source, rule, path="cand.py", **kwargs):
    return [v for v in check_source(source, path, **kwargs) if v["rule"] == rule]


def hit_line(source):
    return next(i for i, text in enumerate(source.splitlines(), 1) if "HIT" in text)


# ---------------------------------------------------------------- library-compute: rejects

LIBRARY_USES = [
    "y = at::matmul(x, x);  // HIT",
    "y = torch::mm(x, x);  // HIT",
    "at::addmm_out(y, y, x, x);  // HIT",
    "y = at::linear(x, x);  // HIT",
    "y = at::conv2d(x, x);  // HIT",
    "y = at::softmax(x, 0);  // HIT",
    "y = at::bmm(x, x);  // HIT",
    "y = at::native::relu(x);  // HIT",
    "y = at::_ops::mm::call(x, x);  // HIT",
    "y = at::cuda::mm(x, x);  // HIT",
    "y = ::at::matmul(x, x);  // HIT",
    "y = torch::nn::functional::linear(x, x);  // HIT",
    "y = torch::linalg::inv(x);  // HIT",
    "auto f = &at::matmul;  // HIT",
    "y = x.matmul(x);  // HIT",
    "y = x.mm(x);  // HIT",
    "y = y.addmm(x, x);  // HIT",
    "y = x.sum();  // HIT",
    "x.relu_();  // HIT",
    "auto h = at::cuda::getCurrentCUDABlasHandle();  // HIT",
    "cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1);  // HIT",
    "cublasGemmEx(h);  // HIT",
    "cublasLtMatmul(h);  // HIT",
    "cudnnConvolutionForward(h);  // HIT",
]


@pytest.mark.parametrize("use", LIBRARY_USES)
def test_library_compute_rejects_at_its_line(use):
    source = cuda_candidate(use)
    hits = fired(source, "library-compute")
    assert hit_line(source) in [v["line"] for v in hits], check_source(source, "cand.py")
    assert all(v["severity"] == "reject" for v in hits)
    assert all("kernel of your own" in v["message"] for v in hits), hits


def test_vendor_and_aten_implementation_headers_are_rejected():
    allowed = cuda_candidate("").replace("#include <ATen/cuda/CUDAContext.h>", "#include <ATen/ops/empty.h>")
    assert fired(allowed, "library-compute") == []
    for header in ("cublas_v2.h", "cublasLt.h", "cudnn.h", "ATen/native/cuda/Loops.cuh", "ATen/ops/matmul.h"):
        source = cuda_candidate("").replace("#include <ATen/cuda/CUDAContext.h>",
                                            f"#include <{header}>  // HIT")
        hits = fired(source, "library-compute")
        assert [v["line"] for v in hits] == [hit_line(source)], (header, hits)


@pytest.mark.parametrize("cpp,hint", [
    ("namespace A = at;\ny = A::matmul(x, x);  // HIT", "at::matmul"),
    ("using namespace at;\ny = matmul(x, x);  // HIT", "matmul() is the ATen operator"),
    ("using namespace torch;\ny = linear(x, x);  // HIT", "linear() is the ATen operator"),
])
def test_namespace_aliases_and_using_do_not_hide_an_operator(cpp, hint):
    source = cuda_candidate(cpp)
    hits = fired(source, "library-compute")
    assert hit_line(source) in [v["line"] for v in hits] and any(hint in v["message"] for v in hits), hits


def test_token_pasting_an_operator_name_is_caught():
    source = cuda_candidate("#define CAT(a, b) a##b\ny = at::CAT(mat, mul)(x, x);")
    hits = fired(source, "library-compute")
    assert any("matmul assembled by ## token pasting" in v["message"] for v in hits), hits


# ---------------------------------------------------------------- library-compute: allowed


def test_allocation_metadata_and_own_helpers_are_allowed():
    source = cuda_candidate('''
        auto a = at::empty({4}, x.options());
        auto b = torch::zeros_like(x);
        auto c = at::empty_strided({4}, {1}, x.options());
        auto acc = x.accessor<float, 1>();
        auto pacc = x.packed_accessor32<float, 1, at::RestrictPtrTraits>();
        const auto n = x.size(0) * x.stride(0) + x.numel() + x.sizes()[0] + x.dim();
        auto z = x.contiguous().view({-1}).to(at::kFloat).reshape({n});
        z.copy_(b);
        b.zero_();
        const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
        const c10::cuda::CUDAGuard guard(x.device());
        auto stream = at::cuda::getCurrentCUDAStream();
        at::parallel_for(0, n, 1, [&](int64_t s, int64_t e) {});
        auto v = at::vec::maximum(at::vec::Vectorized<float>::loadu(a.data_ptr<float>()), at::vec::Vectorized<float>(0.f));
        float m = std::max(1.f, fmaxf(2.f, 3.f));
        TORCH_CHECK(n > 0, "unlike at::matmul, this needs n > 0");  // a string, not a call
        // at::matmul in a comment is not a call
        /* neither is cublasSgemm here */
        cublasHandle_t unused_type_only;
    ''')
    assert fired(source, "library-compute") == []


def test_the_honest_corpus_uses_no_library_compute():
    paths = sorted((REPO / "examples/cuda").glob("*.py")) + sorted((REPO / "examples/cpu").glob("*.py"))
    for path in paths:
        assert fired(path.read_text(), "library-compute", path=str(path)) == [], path


# ---------------------------------------------------------------- sources compiled with load()


def test_sources_loaded_from_files_are_checked(tmp_path):
    (tmp_path / "k.cu").write_text("#include <torch/extension.h>\n__global__ void own_k(float* y) {}\n"
                                   "torch::Tensor run(torch::Tensor x) {\n  return at::matmul(x, x);\n}\n")
    candidate = tmp_path / "cand.py"
    candidate.write_text(textwrap.dedent('''\
        import os
        import torch.nn as nn
        from torch.utils.cpp_extension import load
        _ext = load(name="t", sources=[os.path.join(os.path.dirname(__file__), "k.cu")])

        class ModelNew(nn.Module):
            def forward(self, x):
                return _ext.run(x)
        '''))
    hits = fired(candidate.read_text(), "library-compute", path=str(candidate))
    assert [v["severity"] for v in hits] == ["reject"] and hits[0]["message"].startswith("k.cu:4: at::matmul")
    assert own_kernel_names(candidate) == ["own_k"]
    assert analyse(candidate.read_text(), str(candidate))["dynamic_rules"][0]["own_kernels"] == ["own_k"]
    pathlib_form = candidate.read_text().replace(
        'os.path.join(os.path.dirname(__file__), "k.cu")', 'str(Path(__file__).parent / "k.cu")').replace(
        "import os\n", "import os\nfrom pathlib import Path\n")
    assert fired(pathlib_form, "library-compute", path=str(candidate))


def test_a_loaded_source_the_check_cannot_find_is_a_warning(tmp_path):
    source = textwrap.dedent('''\
        import torch.nn as nn
        from torch.utils.cpp_extension import load
        _ext = load(name="t", sources=[pick_a_file()])
        _other = load(name="u", sources=["missing.cu"])

        class ModelNew(nn.Module):
            def forward(self, x):
                return _ext.run(x) + _other.run(x)
        ''')
    hits = fired(source, "library-compute", path=str(tmp_path / "cand.py"))
    assert [(v["line"], v["severity"]) for v in hits] == [(3, "warn"), (4, "warn")]
    assert "cannot work out" in hits[0]["message"] and "cannot be read" in hits[1]["message"]


# ---------------------------------------------------------------- kernel-required: a kernel forward uses


def test_a_kernel_forward_never_uses_is_rejected():
    source = cuda_candidate("", forward="return torch.relu(x)")
    hits = fired(source, "kernel-required")
    assert [v["severity"] for v in hits] == ["reject"] and "decoy" in hits[0]["message"]


def test_naming_modelnew_in_forward_does_not_make_its_init_count():
    source = cuda_candidate("", forward="_ = ModelNew\n        return torch.relu(x)").replace(
        "class ModelNew(nn.Module):\n",
        "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.kernels = _ext\n")
    assert [v["severity"] for v in fired(source, "kernel-required")] == ["reject"]


@pytest.mark.parametrize("prelude,forward", [
    ("", "return self.ext.run(x) if hasattr(self, 'ext') else _ext.run(x)"),
    ("", "return helper(x)\n\ndef helper(x):\n    return _ext.run(x)"),
    ("", "return Fn.apply(x)\n\nclass Fn(torch.autograd.Function):\n    @staticmethod\n"
         "    def forward(ctx, x):\n        return _ext.run(x)"),
])
def test_the_ways_forward_reaches_its_kernel(prelude, forward):
    source = cuda_candidate("", forward=forward, prelude=prelude)
    assert fired(source, "kernel-required") == [], check_source(source, "cand.py")


def test_an_extension_bound_to_self_or_an_alias_counts():
    base = cuda_candidate("", forward="return self.kernels.run(x)")
    bound = base.replace("class ModelNew(nn.Module):\n",
                         "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                         "        self.kernels = _ext\n")
    assert fired(bound, "kernel-required") == []
    aliased = cuda_candidate("", forward="return run_kernel(x)").replace(
        "class ModelNew", "run_kernel = _ext.run\n\nclass ModelNew")
    assert fired(aliased, "kernel-required") == []


def test_operators_registered_with_torch_library_count():
    source = cuda_candidate("", forward="return torch.ops.mine.run(x)").replace(
        "    return y;\n}\n", "    return y;\n}\nTORCH_LIBRARY(mine, m) { m.def(\"run\", run); }\n")
    assert "TORCH_LIBRARY" in source
    assert fired(source, "kernel-required") == []
    assert fired(source.replace("TORCH_LIBRARY", "NO_LIBRARY"), "kernel-required")


# ---------------------------------------------------------------- KernelBench's policy


def test_kernelbench_partial_replacement_example_passes_the_default_rules():
    result = analyse(MNIST2.read_text(), str(MNIST2))
    assert result["backend"] == "cuda"
    assert [v for v in result["verdicts"] if v["severity"] == "reject"] == []
    assert {v["rule"] for v in result["verdicts"]} == {"torch-compute-in-forward"}
    strict = analyse(MNIST2.read_text(), str(MNIST2), rule_set="strict")["verdicts"]
    assert {v["severity"] for v in strict if v["rule"] == "torch-compute-in-forward"} == {"reject"}


def test_a_candidate_without_any_kernel_is_still_rejected_by_default():
    source = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    verdicts = check_source(source, "c.py")
    assert {(v["rule"], v["severity"]) for v in verdicts} == {("kernel-required", "reject"),
                                                               ("torch-compute-in-forward", "warn")}


# ---------------------------------------------------------------- rule sets, static and dynamic


def test_rule_sets_set_library_compute_and_carry_the_dynamic_rule():
    source = cuda_candidate("y = at::matmul(x, x);")
    by_set = {name: analyse(source, "cand.py", rule_set=name)
              for name in ("default", "strict", "allow-libraries", "structural")}
    severity = {n: {v["severity"] for v in a["verdicts"] if v["rule"] == "library-compute"}
                for n, a in by_set.items()}
    assert severity == {"default": {"reject"}, "strict": {"reject"}, "allow-libraries": {"warn"},
                        "structural": set()}
    share = by_set["allow-libraries"]["dynamic_rules"]
    assert share == [{"rule": "own-kernel-share", "severity": "reject", "min_share": 0.01,
                      "rule_set": "allow-libraries", "own_kernels": ["k"]}]
    assert by_set["default"]["dynamic_rules"][0]["min_share"] == 0.01
    assert by_set["structural"]["dynamic_rules"] == []


def test_a_rule_set_can_relax_the_threshold_and_bad_thresholds_are_errors(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"name": "r", "extends": "default",
                                "rules": {"own-kernel-share": {"severity": "warn", "min_share": 0.001}}}))
    rule = analyse(cuda_candidate(""), "cand.py", rule_set=str(path))["dynamic_rules"]
    assert [(r["severity"], r["min_share"]) for r in rule] == [("warn", 0.001)]
    path.write_text(json.dumps({"name": "r", "extends": "default",
                                "rules": {"own-kernel-share": {"severity": "off"}}}))
    assert analyse(cuda_candidate(""), "cand.py", rule_set=str(path))["dynamic_rules"] == []
    for bad in (1.5, "1 %", True, -0.1):
        path.write_text(json.dumps({"name": "r", "rules": {"own-kernel-share": {"severity": "reject",
                                                                                  "min_share": bad}}}))
        with pytest.raises(RuleSetError, match="min_share must be a number from 0 to 1"):
            load_rule_set(str(path))
