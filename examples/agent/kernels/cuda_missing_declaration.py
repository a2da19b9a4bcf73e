"""Masked broadcast from row 0 in CUDA, one grid-stride pass: the first version, which does not
build. The C++ unit, where load_inline writes the Python binding, has no declaration of
masked_broadcast_row0 (it is defined in the CUDA unit only).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = ""

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

__global__ void masked_broadcast_row0_kernel(const float* __restrict__ x, const bool* __restrict__ mask,
                                             float* __restrict__ out, int64_t n, int64_t D) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int64_t j = i % D;
        out[i] = mask[j] ? x[j] : x[i];  // x[j] is row 0, column j
    }
}

torch::Tensor masked_broadcast_row0(torch::Tensor x, torch::Tensor mask) {
    TORCH_CHECK(x.is_cuda() && mask.is_cuda(), "x and mask must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(mask.scalar_type() == torch::kBool, "mask must be bool");
    TORCH_CHECK(x.dim() == 2, "x must be (rows, D)");
    TORCH_CHECK(x.device() == mask.device(), "x and mask must be on the same device");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    mask = mask.contiguous();
    const int64_t D = x.size(1);
    TORCH_CHECK(mask.numel() == D, "mask must have one entry per column");
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return out;

    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, (int64_t)sms * 32);
    masked_broadcast_row0_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), mask.data_ptr<bool>(), out.data_ptr<float>(), n, D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_agent_masked_broadcast_cuda",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["masked_broadcast_row0"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.register_buffer("mask", torch.arange(dim) % 3 != 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.masked_broadcast_row0(x, self.mask)
