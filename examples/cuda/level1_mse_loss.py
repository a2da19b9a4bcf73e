"""Candidate for problems/level1/12_mse_loss.py: two-stage deterministic reduction of (a - b)^2 into a 0-dim float32 mean.

Stage 1: a grid-stride kernel (float4 loads) leaves one partial sum per block, reduced with warp
shuffles. Stage 2: one block adds the partials in double and divides by the element count,
writing the 0-dimensional output that torch.mean returns.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor mse_loss_forward(torch::Tensor a, torch::Tensor b);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int MAX_BLOCKS = 1024;

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// Block-wide sum, result valid in thread 0.
template <typename T>
__device__ T block_sum(T v) {
    __shared__ T sh[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = (threadIdx.x < WARPS) ? sh[threadIdx.x] : T(0);
    if (warp == 0) v = warp_sum(v);
    return v;
}

__device__ __forceinline__ float sq_diff(float a, float b) {
    const float d = a - b;
    return d * d;
}

__global__ void __launch_bounds__(THREADS)
sq_diff_partial_kernel(const float* __restrict__ a, const float* __restrict__ b,
                       float* __restrict__ partial, int64_t n, bool vec4) {
    const int64_t stride = (int64_t)gridDim.x * THREADS;
    const int64_t tid = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    float acc = 0.f;
    int64_t tail = 0;
    if (vec4) {
        const int64_t n4 = n / 4;
        const float4* a4 = reinterpret_cast<const float4*>(a);
        const float4* b4 = reinterpret_cast<const float4*>(b);
        for (int64_t i = tid; i < n4; i += stride) {
            const float4 x = a4[i], y = b4[i];
            acc += sq_diff(x.x, y.x) + sq_diff(x.y, y.y) + sq_diff(x.z, y.z) + sq_diff(x.w, y.w);
        }
        tail = n4 * 4;
    }
    for (int64_t i = tail + tid; i < n; i += stride) acc += sq_diff(a[i], b[i]);
    acc = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

__global__ void __launch_bounds__(THREADS)
finish_mean_kernel(const float* __restrict__ partial, int num_partials, float* __restrict__ out, int64_t n) {
    double acc = 0.0;
    for (int i = threadIdx.x; i < num_partials; i += THREADS) acc += (double)partial[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) out[0] = (float)(acc / (double)n);
}

torch::Tensor mse_loss_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(a.sizes() == b.sizes(), "inputs must have the same shape");
    const c10::cuda::CUDAGuard guard(a.device());
    a = a.contiguous();
    b = b.contiguous();
    const int64_t n = a.numel();
    auto out = torch::empty({}, a.options());  // 0-dim, like torch.mean
    auto stream = at::cuda::getCurrentCUDAStream();

    const int64_t want = (n + THREADS * 4 - 1) / (THREADS * 4);
    const int blocks = (int)std::max<int64_t>(1, std::min<int64_t>(want, MAX_BLOCKS));
    auto partial = torch::empty({blocks}, a.options());
    const bool vec4 = reinterpret_cast<std::uintptr_t>(a.data_ptr<float>()) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(b.data_ptr<float>()) % 16 == 0;
    sq_diff_partial_kernel<<<blocks, THREADS, 0, stream>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), partial.data_ptr<float>(), n, vec4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    // n == 0 gives 0/0 = NaN, as torch.mean of an empty tensor does.
    finish_mean_kernel<<<1, THREADS, 0, stream>>>(partial.data_ptr<float>(), blocks, out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_mse_loss",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["mse_loss_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return _ext.mse_loss_forward(predictions, targets)
