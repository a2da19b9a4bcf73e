"""Candidate for problems/collectives/4_all_to_all_scale.py on the CPU (gloo).

torch.distributed exchanges the row blocks; the per-feature scale is one C++ pass, in place.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from kernelbench.distributed_collectives import is_distributed_run

_CPP = r"""
#include <torch/extension.h>

void scale_columns_(torch::Tensor y, torch::Tensor scale) {
    TORCH_CHECK(y.is_contiguous() && y.scalar_type() == torch::kFloat32, "y: contiguous float32");
    const int64_t dim = y.size(1), n = y.numel();
    float* p = y.data_ptr<float>();
    const float* s = scale.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) p[i] *= s[i % dim];
}
"""

_ext = load_inline(
    name="kbench_cpu_collective_all_to_all",
    cpp_sources=_CPP,
    functions=["scale_columns_"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        exchanged = torch.empty_like(x)
        if is_distributed_run():
            dist.all_to_all_single(exchanged, x.contiguous())
        else:
            exchanged.copy_(x)
        _ext.scale_columns_(exchanged, self.scale.contiguous())
        return exchanged
