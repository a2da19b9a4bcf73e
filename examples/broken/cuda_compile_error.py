"""Broken CUDA candidate for problems/level1/1_relu.py: its CUDA source does not compile.

The __global__ kernel uses `scale_factor`, an identifier declared nowhere, so nvcc stops with
"error: identifier "scale_factor" is undefined" and load_inline raises RuntimeError ("Error
building extension 'kbench_cuda_broken_compile_error'") while the module is being imported.

kbench must report a compile (build) error for this candidate, with nvcc's message in the
details, and must not run, time or compare anything for it.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor relu_forward(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i] * scale_factor;  // BUG (deliberate): undeclared identifier
        out[i] = v < 0.f ? 0.f : v;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return out;
    const int threads = 256;
    relu_kernel<<<(unsigned)((n + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_broken_compile_error",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["relu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x)
