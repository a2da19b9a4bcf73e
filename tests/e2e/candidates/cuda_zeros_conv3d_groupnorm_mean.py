"""Exploit candidate (GPU; docs/integrity.md, exploit class 14) for
tests/e2e/problems/kernelbench_level2_23_conv3d_groupnorm_mean.py: a CUDA kernel that returns
zeros, as the 106x kernel of kbench issue 14 in effect did. The reference's outputs are about
1e-9, so zeros pass the fp32 tolerance on every trial. The kernel reads its whole input once
(a sum per batch row, multiplied by 0), so its time is not below the roofline floor (input
bytes over the DRAM bandwidth) and no timing flag or status gives it away: only the trivial-answer
check does. kbench must report it `ok` with a trivial-answer warning and an unscored speedup
(timing.speedup_scored false)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor zeros_mean(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

constexpr int kThreads = 256;

// One block per batch row: every element of the row is read, and the result thrown away.
__global__ void zeros_mean_kernel(const float* __restrict__ x, float* __restrict__ out,
                                  int64_t per_row) {
    const float* row = x + (int64_t)blockIdx.x * per_row;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < per_row; i += kThreads) {
        sum += row[i];
    }
    __shared__ float partial[kThreads];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = kThreads / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[blockIdx.x] = partial[0] * 0.0f;  // the inputs are finite: 0
    }
}

torch::Tensor zeros_mean(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "zeros_mean: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "zeros_mean: x must be float32");
    TORCH_CHECK(x.dim() == 5, "zeros_mean: x must be (batch, channels, D, H, W)");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    const int64_t batch = x.size(0);
    auto out = torch::empty({batch}, x.options());
    if (batch == 0) return out;
    zeros_mean_kernel<<<(unsigned)batch, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), x.numel() / batch);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_zeros_conv3d_groupnorm_mean",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["zeros_mean"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.zeros_mean(x)
