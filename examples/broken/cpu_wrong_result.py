"""Broken candidate for problems/level1/1_relu.py: a C++ kernel that computes the wrong values.

It builds and runs fine, but writes max(x, 0) + 1e-2, so every element is off by 0.01 (> the
1e-4 + 1e-4*|r| tolerance). kbench must report `incorrect`, with the mismatch count (all
elements) and max_abs_err of about 1e-2.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor relu_off_by_bias(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "x must be contiguous float32");
    auto out = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        const float v = in[i];
        o[i] = (v > 0.0f ? v : 0.0f) + 1e-2f;  // BUG: the + 1e-2
    }
    return out;
}
"""

_ext = load_inline(
    name="kbench_broken_cpu_wrong_result",
    cpp_sources=_CPP,
    functions=["relu_off_by_bias"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_off_by_bias(x.contiguous())
