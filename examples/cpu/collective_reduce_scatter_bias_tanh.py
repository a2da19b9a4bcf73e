"""Candidate for problems/collectives/3_reduce_scatter_bias_tanh.py on the CPU (gloo).

torch.distributed reduces and scatters the blocks; the mean, the bias and the tanh are one
C++ pass over this rank's shard, in place.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from kernelbench.distributed_collectives import get_world_size, is_distributed_run

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

void mean_bias_tanh_(torch::Tensor y, torch::Tensor bias, int64_t world_size) {
    TORCH_CHECK(y.is_contiguous() && y.scalar_type() == torch::kFloat32, "y: contiguous float32");
    const int64_t dim = y.size(1), n = y.numel();
    float* p = y.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    const float world = static_cast<float>(world_size);
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) p[i] = std::tanh(p[i] / world + b[i % dim]);
}
"""

_ext = load_inline(
    name="kbench_cpu_collective_reduce_scatter",
    cpp_sources=_CPP,
    functions=["mean_bias_tanh_"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        world = get_world_size()
        shard = torch.empty((x.shape[0] // world, x.shape[1]), dtype=x.dtype)
        if is_distributed_run():
            dist.reduce_scatter_tensor(shard, x.contiguous(), op=dist.ReduceOp.SUM)
        else:
            shard.copy_(x)
        _ext.mean_bias_tanh_(shard, self.bias.contiguous(), world)
        return shard
