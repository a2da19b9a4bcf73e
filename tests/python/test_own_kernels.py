"""The candidate's own kernel names (python/kbench/worker/own_kernels.py). A name missed here
makes the integrity check report that the candidate's kernels never ran, so every way CUDA lets
a kernel be declared must yield its name, and nothing else."""

import json
from pathlib import Path

import pytest

from kbench.worker.own_kernels import own_kernel_names, own_kernel_names_in

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "declaration",
    [
        "__global__ void k(float* x)",
        "__global__ void __launch_bounds__(256) k(float* x)",
        "__global__ void __launch_bounds__(TILE * TILE)\nk(const float* __restrict__ x)",
        "__global__ void __launch_bounds__(BLOCK * (WARPS + 1), 2) k(int n)",
        "__global__ __launch_bounds__(256, 2) void k(int n)",
        "__global__ void __cluster_dims__(2, 1, 1) __maxnreg__(64) k(int n)",
        "template <typename T, int N>\n__global__ void k(T* x)",
        'extern "C" __global__ void k(float* x)',
        "static __global__ void\nk (float* x)",
        "__global__ void\n__launch_bounds__(128)\nk(float* x)",
    ],
)
def test_every_cuda_declaration_yields_its_name(declaration):
    assert own_kernel_names_in(declaration + " {}") == ["k"]


def test_triton_kernels_are_named_under_any_decorators():
    source = (
        "@triton.autotune(configs=[triton.Config({'B': 64})], key=['n'])\n"
        "@triton.jit\n"
        "def add_kernel(x, n, B: tl.constexpr):\n    pass\n\n"
        "@triton.jit(do_not_specialize=['n'])\n@triton.heuristics({'E': lambda a: True})\n"
        "def scale_kernel(x, n):\n    pass\n"
    )
    assert own_kernel_names_in(source) == ["add_kernel", "scale_kernel"]


def test_device_functions_and_launches_are_not_kernels():
    source = (
        "__device__ float helper(float v) { return v; }\n"
        "__global__ void __launch_bounds__(64) real(float* x) { x[0] = helper(x[0]); }\n"
        "void launch(float* x) { real<<<1, 64>>>(x); }\n"
    )
    assert own_kernel_names_in(source) == ["real"]


def test_no_candidate_file_means_no_names():
    assert own_kernel_names(None) == []


def test_every_bundled_cuda_example_names_a_kernel_of_its_own():
    # The examples that must run with their own kernels are the ones the suite expects "ok".
    manifest = json.loads((REPO / "examples/examples.json").read_text())
    checked = 0
    for entry in manifest["entries"]:
        path = REPO / "examples" / entry["candidate"]
        if entry["device"] != "cuda" or entry["expect"] != "ok":
            continue
        names = own_kernel_names(path)
        assert names, f"{path}: no kernel name read"
        assert not any(name.startswith("__") for name in names), f"{path}: {names}"
        checked += 1
    assert checked >= 20
