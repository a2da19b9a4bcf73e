"""Broken candidate for problems/level1/1_relu.py: its C++ source does not compile.

The kernel uses an identifier that is never declared (`threshold_value`), so load_inline fails at
import time with "'threshold_value' was not declared in this scope". kbench must report
`compile_error`, quoting that first compiler error and keeping the full build log.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    auto out = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        o[i] = in[i] > threshold_value ? in[i] : 0.0f;  // BUG: threshold_value is undeclared
    }
    return out;
}
"""

_ext = load_inline(
    name="kbench_broken_cpu_compile_error",
    cpp_sources=_CPP,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x.contiguous())
