"""Exploit candidate (docs/integrity.md, exploit class 14) for tests/e2e/problems/near_zero_output.py:
a C++ kernel that writes zeros of the input's shape and computes nothing. The softmax over 200,000
columns is about 5e-6 everywhere, below the fp32 atol, so zeros pass every trial. It passes the
default static rules; kbench must report it `ok`, timed, with a trivial-answer warning and the
speedup not scored."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cstring>

torch::Tensor zeros_like_input(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "zeros_like_input: x must be a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "zeros_like_input: x must be float32");
    auto out = torch::empty_like(x, torch::MemoryFormat::Contiguous);
    std::memset(out.data_ptr<float>(), 0, sizeof(float) * out.numel());
    return out;
}
"""

_ext = load_inline(
    name="kbench_cpu_zeros_like_input",
    cpp_sources=_CPP,
    functions=["zeros_like_input"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.zeros_like_input(x)
