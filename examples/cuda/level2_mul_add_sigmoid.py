"""Candidate for problems/level2/5_mul_add_sigmoid.py: one fused elementwise pass sigmoid(x * weight[col] + bias[col]) with float4 accesses.

weight and bias are created exactly as in the reference (two nn.Parameter(torch.randn(dim)), in
that order) so that the same seed gives the same values.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor mul_add_sigmoid(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

__device__ __forceinline__ float sigmoid1(float z) { return 1.f / (1.f + expf(-z)); }

// x viewed as (rows, D); weight and bias have D elements. vec4 requires D % 4 == 0 and
// 16-byte aligned pointers, so each float4 of x lies inside one row.
__global__ void mul_add_sigmoid_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                       const float* __restrict__ b, float* __restrict__ out,
                                       int64_t n, int64_t D, bool vec4) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (vec4) {
        const int64_t n4 = n / 4;
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* o4 = reinterpret_cast<float4*>(out);
        for (int64_t i = tid; i < n4; i += stride) {
            const int64_t c = (i * 4) % D;
            const float4 v = x4[i];
            const float4 wv = *reinterpret_cast<const float4*>(w + c);
            const float4 bv = *reinterpret_cast<const float4*>(b + c);
            o4[i] = make_float4(sigmoid1(v.x * wv.x + bv.x), sigmoid1(v.y * wv.y + bv.y),
                                sigmoid1(v.z * wv.z + bv.z), sigmoid1(v.w * wv.w + bv.w));
        }
    } else {
        for (int64_t i = tid; i < n; i += stride) {
            const int64_t c = i % D;
            out[i] = sigmoid1(x[i] * w[c] + b[c]);
        }
    }
}

torch::Tensor mul_add_sigmoid(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "tensors must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int64_t D = x.size(-1);
    TORCH_CHECK(weight.numel() == D && bias.numel() == D, "weight/bias must match the last dim");
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return out;

    auto aligned = [](const torch::Tensor& t) {
        return reinterpret_cast<std::uintptr_t>(t.data_ptr<float>()) % 16 == 0;
    };
    const bool vec4 = D % 4 == 0 && aligned(x) && aligned(weight) && aligned(bias) && aligned(out);
    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t work = vec4 ? n / 4 : n;
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((work + threads - 1) / threads, (int64_t)sms * 16));
    mul_add_sigmoid_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(),
        n, D, vec4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_mul_add_sigmoid",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["mul_add_sigmoid"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.mul_add_sigmoid(x, self.weight, self.bias)
