"""Candidate for problems/level1/1_relu.py: grid-stride elementwise ReLU with float4 loads and stores.

NaN propagates as in torch.relu (the kernel tests `v < 0`, which is false for NaN).
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
#include <algorithm>
#include <cstdint>

__device__ __forceinline__ float relu1(float v) { return v < 0.f ? 0.f : v; }

// Vectorised body over n4 float4 chunks, plus a scalar tail [tail_start, n).
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ out,
                            int64_t n4, int64_t tail_start, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* out4 = reinterpret_cast<float4*>(out);
    for (int64_t i = tid; i < n4; i += stride) {
        float4 v = x4[i];
        v.x = relu1(v.x); v.y = relu1(v.y); v.z = relu1(v.z); v.w = relu1(v.w);
        out4[i] = v;
    }
    for (int64_t i = tail_start + tid; i < n; i += stride) {
        out[i] = relu1(x[i]);
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return out;

    // Fresh contiguous tensors are 256-byte aligned; fall back to scalars otherwise.
    const bool aligned = (reinterpret_cast<std::uintptr_t>(x.data_ptr<float>()) % 16 == 0) &&
                         (reinterpret_cast<std::uintptr_t>(out.data_ptr<float>()) % 16 == 0);
    const int64_t n4 = aligned ? n / 4 : 0;
    const int64_t tail_start = n4 * 4;

    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t work = std::max<int64_t>(n4, n - tail_start);
    const int64_t blocks = std::min<int64_t>((work + threads - 1) / threads, (int64_t)sms * 16);
    relu_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), n4, tail_start, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_relu",
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
