"""Candidate for problems/collectives/3_reduce_scatter_bias_tanh.py on GPUs (NCCL).

NCCL reduces and scatters the blocks; the mean, the bias and the tanh are one elementwise
kernel over this rank's shard, in place.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from kernelbench.distributed_collectives import get_world_size, is_distributed_run

_CPP = "void mean_bias_tanh_(torch::Tensor y, torch::Tensor bias, int64_t world);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

__global__ void mean_bias_tanh_kernel(float* __restrict__ y, const float* __restrict__ b,
                                      int64_t n, int64_t dim, float world) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = tanhf(y[i] / world + b[i % dim]);
    }
}

void mean_bias_tanh_(torch::Tensor y, torch::Tensor bias, int64_t world) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat32,
                "y must be a contiguous float32 CUDA tensor");
    const c10::cuda::CUDAGuard guard(y.device());
    const int64_t n = y.numel();
    if (n == 0) return;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    mean_bias_tanh_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), bias.data_ptr<float>(), n, y.size(1), (float)world);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

_ext = load_inline(
    name="kbench_cuda_collective_reduce_scatter",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["mean_bias_tanh_"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        world = get_world_size()
        shard = torch.empty((x.shape[0] // world, x.shape[1]), dtype=x.dtype, device=x.device)
        if is_distributed_run():
            dist.reduce_scatter_tensor(shard, x.contiguous(), op=dist.ReduceOp.SUM)
        else:
            shard.copy_(x)
        _ext.mean_bias_tanh_(shard, self.bias.contiguous(), world)
        return shard
