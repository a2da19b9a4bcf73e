"""Candidate for problems/collectives/1_all_reduce_mean_affine.py on the CPU (gloo).

The exchange stays torch.distributed's all-reduce (communication, not compute); the mean,
the affine map and the ReLU are one C++ pass over the reduced buffer, in place.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from kernelbench.distributed_collectives import get_world_size, is_distributed_run

_CPP = r"""
#include <torch/extension.h>

void mean_affine_relu_(torch::Tensor y, torch::Tensor weight, torch::Tensor bias, int64_t world_size) {
    TORCH_CHECK(y.is_contiguous() && y.scalar_type() == torch::kFloat32, "y: contiguous float32");
    const int64_t dim = y.size(1), n = y.numel();
    float* p = y.data_ptr<float>();
    const float* w = weight.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    // Divides by the world size as the reference does (x / n, not x * (1/n)): same rounding.
    const float world = static_cast<float>(world_size);
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const int64_t c = i % dim;
        const float v = p[i] / world * w[c] + b[c];
        p[i] = v > 0.0f ? v : 0.0f;
    }
}
"""

_ext = load_inline(
    name="kbench_cpu_collective_all_reduce",
    cpp_sources=_CPP,
    functions=["mean_affine_relu_"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = torch.empty_like(x).copy_(x)
        if is_distributed_run():
            dist.all_reduce(total, op=dist.ReduceOp.SUM)
        _ext.mean_affine_relu_(total, self.weight.contiguous(), self.bias.contiguous(),
                               get_world_size())
        return total
