"""Candidate for problems/level1/13_scale_shift.py: grid-stride elementwise x * scale + shift with float4 accesses; the Python floats are passed to the kernel as arguments.

The multiply and the add are rounded separately (__fmul_rn / __fadd_rn, no FMA contraction),
exactly as PyTorch's two elementwise ops round them.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor scale_shift_forward(torch::Tensor x, double scale, double shift);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

__device__ __forceinline__ float affine(float v, float s, float t) { return __fadd_rn(__fmul_rn(v, s), t); }

__global__ void scale_shift_kernel(const float* __restrict__ x, float* __restrict__ out,
                                   int64_t n4, int64_t tail_start, int64_t n, float s, float t) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* out4 = reinterpret_cast<float4*>(out);
    for (int64_t i = tid; i < n4; i += stride) {
        float4 v = x4[i];
        v.x = affine(v.x, s, t); v.y = affine(v.y, s, t); v.z = affine(v.z, s, t); v.w = affine(v.w, s, t);
        out4[i] = v;
    }
    for (int64_t i = tail_start + tid; i < n; i += stride) out[i] = affine(x[i], s, t);
}

torch::Tensor scale_shift_forward(torch::Tensor x, double scale, double shift) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return out;

    const bool aligned = (reinterpret_cast<std::uintptr_t>(x.data_ptr<float>()) % 16 == 0) &&
                         (reinterpret_cast<std::uintptr_t>(out.data_ptr<float>()) % 16 == 0);
    const int64_t n4 = aligned ? n / 4 : 0;
    const int64_t tail_start = n4 * 4;

    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t work = std::max<int64_t>(n4, n - tail_start);
    const int64_t blocks = std::min<int64_t>((work + threads - 1) / threads, (int64_t)sms * 16);
    scale_shift_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), n4, tail_start, n, (float)scale, (float)shift);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_scale_shift",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["scale_shift_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.scale_shift_forward(x, self.scale, self.shift)
