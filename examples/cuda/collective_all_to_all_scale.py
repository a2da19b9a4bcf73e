"""Candidate for problems/collectives/4_all_to_all_scale.py on GPUs (NCCL).

NCCL exchanges the row blocks; the per-feature scale is one vectorised elementwise kernel
(float4 loads when the row width allows), in place.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from kernelbench.distributed_collectives import is_distributed_run

_CPP = "void scale_columns_(torch::Tensor y, torch::Tensor scale);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

__global__ void scale_columns4_kernel(float4* __restrict__ y, const float4* __restrict__ s,
                                      int64_t n4, int64_t dim4) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4;
         i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = y[i];
        const float4 k = s[i % dim4];
        v.x *= k.x; v.y *= k.y; v.z *= k.z; v.w *= k.w;
        y[i] = v;
    }
}

__global__ void scale_columns_kernel(float* __restrict__ y, const float* __restrict__ s,
                                     int64_t n, int64_t dim) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        y[i] *= s[i % dim];
    }
}

void scale_columns_(torch::Tensor y, torch::Tensor scale) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat32,
                "y must be a contiguous float32 CUDA tensor");
    const c10::cuda::CUDAGuard guard(y.device());
    const int64_t n = y.numel(), dim = y.size(1);
    if (n == 0) return;
    const int threads = 256;
    auto stream = at::cuda::getCurrentCUDAStream();
    if (dim % 4 == 0) {
        const int blocks = (int)std::min<int64_t>((n / 4 + threads - 1) / threads, 65535);
        scale_columns4_kernel<<<blocks, threads, 0, stream>>>(
            reinterpret_cast<float4*>(y.data_ptr<float>()),
            reinterpret_cast<const float4*>(scale.data_ptr<float>()), n / 4, dim / 4);
    } else {
        const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
        scale_columns_kernel<<<blocks, threads, 0, stream>>>(y.data_ptr<float>(),
                                                             scale.data_ptr<float>(), n, dim);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

_ext = load_inline(
    name="kbench_cuda_collective_all_to_all",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["scale_columns_"],
    extra_cuda_cflags=["-O3"],
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
