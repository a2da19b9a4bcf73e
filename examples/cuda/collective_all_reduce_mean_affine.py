"""Candidate for problems/collectives/1_all_reduce_mean_affine.py on GPUs (NCCL).

NCCL's all-reduce does the exchange (communication, not compute, stays torch.distributed); the
mean, the affine map and the ReLU are one elementwise kernel over the reduced buffer, in place,
on the current stream, which NCCL's work is ordered before.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from kernelbench.distributed_collectives import get_world_size, is_distributed_run

_CPP = "void mean_affine_relu_(torch::Tensor y, torch::Tensor weight, torch::Tensor bias, int64_t world);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

__global__ void mean_affine_relu_kernel(float* __restrict__ y, const float* __restrict__ w,
                                        const float* __restrict__ b, int64_t n, int64_t dim,
                                        float world) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = i % dim;
        const float v = y[i] / world * w[c] + b[c];  // x / n as the reference divides
        y[i] = v > 0.f ? v : 0.f;
    }
}

void mean_affine_relu_(torch::Tensor y, torch::Tensor weight, torch::Tensor bias, int64_t world) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat32,
                "y must be a contiguous float32 CUDA tensor");
    const c10::cuda::CUDAGuard guard(y.device());
    const int64_t n = y.numel();
    if (n == 0) return;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    mean_affine_relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), n, y.size(1),
        (float)world);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

_ext = load_inline(
    name="kbench_cuda_collective_all_reduce",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["mean_affine_relu_"],
    extra_cuda_cflags=["-O3"],
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
