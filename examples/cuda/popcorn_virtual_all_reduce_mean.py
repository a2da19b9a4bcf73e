"""Candidate for problems/popcorn/2_virtual_all_reduce_mean.py: one grid-stride pass that averages the R rank blocks elementwise and writes the mean into all R blocks (float4 when possible).

x is (R*N, D) with rank r owning rows [r*N, (r+1)*N); N is derived from x.shape[0] // R at every
call (the popcorn variant jitters it). Each thread reads one position from the R blocks once, sums
them in rank order, divides by R (as torch.mean does: sum, then divide) and stores the result R
times, so the kernel moves the minimum 2 * numel floats.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor virtual_all_reduce_mean(torch::Tensor x, int64_t world_size);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>
#include <type_traits>

// block_elems = N * D (elements per rank block), in units of float4 when VEC.
template <bool VEC>
__global__ void all_reduce_mean_kernel(const float* __restrict__ x, float* __restrict__ out,
                                       int64_t block_elems, int R) {
    using T = typename std::conditional<VEC, float4, float>::type;
    const T* xs = reinterpret_cast<const T*>(x);
    T* os = reinterpret_cast<T*>(out);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < block_elems; i += stride) {
        if constexpr (VEC) {
            float4 acc = xs[i];
            for (int r = 1; r < R; ++r) {
                const float4 v = xs[(int64_t)r * block_elems + i];
                acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
            }
            acc.x /= (float)R; acc.y /= (float)R; acc.z /= (float)R; acc.w /= (float)R;
            for (int r = 0; r < R; ++r) os[(int64_t)r * block_elems + i] = acc;
        } else {
            float acc = xs[i];
            for (int r = 1; r < R; ++r) acc += xs[(int64_t)r * block_elems + i];
            acc /= (float)R;
            for (int r = 0; r < R; ++r) os[(int64_t)r * block_elems + i] = acc;
        }
    }
}

torch::Tensor virtual_all_reduce_mean(torch::Tensor x, int64_t world_size) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() == 2, "x must be (R * N, D)");
    TORCH_CHECK(world_size > 0 && x.size(0) % world_size == 0, "rows must be a multiple of world_size");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return out;
    const int64_t block_elems = n / world_size;

    const bool vec = block_elems % 4 == 0 &&
                     reinterpret_cast<std::uintptr_t>(x.data_ptr<float>()) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(out.data_ptr<float>()) % 16 == 0;
    const int64_t work = vec ? block_elems / 4 : block_elems;
    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t blocks = std::min<int64_t>((work + threads - 1) / threads, (int64_t)sms * 16);
    auto stream = at::cuda::getCurrentCUDAStream();
    if (vec) {
        all_reduce_mean_kernel<true><<<(unsigned)blocks, threads, 0, stream>>>(
            x.data_ptr<float>(), out.data_ptr<float>(), work, (int)world_size);
    } else {
        all_reduce_mean_kernel<false><<<(unsigned)blocks, threads, 0, stream>>>(
            x.data_ptr<float>(), out.data_ptr<float>(), work, (int)world_size);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_virtual_all_reduce_mean",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["virtual_all_reduce_mean"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, world_size: int):
        super().__init__()
        self.world_size = world_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.virtual_all_reduce_mean(x, self.world_size)
