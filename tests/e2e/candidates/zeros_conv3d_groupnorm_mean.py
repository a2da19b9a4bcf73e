"""Exploit candidate (docs/integrity.md, exploit class 14) for
tests/e2e/problems/kernelbench_level2_23_conv3d_groupnorm_mean.py: a C++ kernel that writes one
zero per batch row and computes nothing. The reference's outputs are about 1e-9, so zeros pass
the fp32 tolerance on every trial. It passes the default static rules (its own kernel does the
writing); kbench must report it `ok` with a trivial-answer warning and an unscored speedup
(timing.speedup_scored false)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor zeros_mean(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "zeros_mean: x must be a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "zeros_mean: x must be float32");
    TORCH_CHECK(x.dim() == 5, "zeros_mean: x must be (batch, channels, D, H, W)");
    auto out = torch::empty({x.size(0)}, x.options());
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.size(0); ++i) {
        o[i] = 0.0f;
    }
    return out;
}
"""

_ext = load_inline(
    name="kbench_cpu_zeros_conv3d_groupnorm_mean",
    cpp_sources=_CPP,
    functions=["zeros_mean"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.zeros_mean(x.contiguous())
