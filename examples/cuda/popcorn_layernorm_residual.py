"""Candidate for problems/popcorn/5_layernorm_residual.py: one block per row, two-pass mean/variance with block reductions, fused affine + residual write (x + LayerNorm(x)).

The row count and width are read from x at every call (the popcorn variant jitters the rows).
The parameters live in an nn.LayerNorm, as in the reference, so the state dict and eps match.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor layernorm_residual(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

constexpr int THREADS = 512;
constexpr int WARPS = THREADS / 32;

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// Sum over the block; every thread gets the result. `sh` holds WARPS floats.
__device__ float block_sum(float v, float* sh) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < WARPS ? sh[lane] : 0.f;
        v = warp_sum(v);
        if (lane == 0) sh[0] = v;
    }
    __syncthreads();
    const float total = sh[0];
    __syncthreads();  // sh may be reused by the next call
    return total;
}

__global__ void __launch_bounds__(THREADS)
layernorm_residual_kernel(const float* __restrict__ x, const float* __restrict__ w,
                  const float* __restrict__ b, float* __restrict__ out,
                  int64_t width, float eps) {
    __shared__ float sh[WARPS];
    const float* xr = x + (int64_t)blockIdx.x * width;
    float* outr = out + (int64_t)blockIdx.x * width;

    float acc = 0.f;
    for (int64_t j = threadIdx.x; j < width; j += THREADS) acc += xr[j];
    const float mean = block_sum(acc, sh) / (float)width;

    acc = 0.f;
    for (int64_t j = threadIdx.x; j < width; j += THREADS) {
        const float d = xr[j] - mean;
        acc += d * d;
    }
    const float var = block_sum(acc, sh) / (float)width;  // biased, as nn.LayerNorm
    const float rstd = 1.f / sqrtf(var + eps);

    for (int64_t j = threadIdx.x; j < width; j += THREADS) {
        const float v = xr[j];
        outr[j] = v + ((v - mean) * rstd * w[j] + b[j]);
    }
}

torch::Tensor layernorm_residual(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "tensors must be float32");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int64_t width = x.size(-1);
    TORCH_CHECK(weight.numel() == width && bias.numel() == width, "weight/bias size must match the last dim");
    auto out = torch::empty_like(x);
    if (x.numel() == 0) return out;
    const int64_t rows = x.numel() / width;
    TORCH_CHECK(rows <= 0x7fffffffLL, "too many rows");
    layernorm_residual_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
        out.data_ptr<float>(), width, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_layernorm_residual",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["layernorm_residual"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.layernorm_residual(x, self.ln.weight, self.ln.bias, self.ln.eps)
