"""Candidate for problems/collectives/2_all_gather_softmax.py on GPUs (NCCL).

NCCL gathers every rank's rows; the per-feature scaling and the row softmax are one kernel, one
block per row, with an online max/sum pass and a normalising pass (as cuda/level1_softmax.py).
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from kernelbench.distributed_collectives import get_world_size, is_distributed_run

_CPP = "torch::Tensor scaled_softmax(torch::Tensor x, torch::Tensor scale);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cmath>
#include <cstdint>

constexpr int THREADS = 512;
constexpr int WARPS = THREADS / 32;

// Merge two (max, sum) pairs where sum is relative to max; an empty pair has max = -inf.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    const float mn = fmaxf(m, m2);
    if (mn == -INFINITY) return;  // both empty
    s = s * expf(m - mn) + s2 * expf(m2 - mn);
    m = mn;
}

__global__ void __launch_bounds__(THREADS)
scaled_softmax_rows_kernel(const float* __restrict__ x, const float* __restrict__ scale,
                           float* __restrict__ out, int64_t width) {
    __shared__ float sh_m[WARPS];
    __shared__ float sh_s[WARPS];
    const float* xr = x + (int64_t)blockIdx.x * width;
    float* outr = out + (int64_t)blockIdx.x * width;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;

    // Pass 1: online max and sum of exp.
    float m = -INFINITY, s = 0.f;
    for (int64_t j = threadIdx.x; j < width; j += THREADS) {
        const float v = xr[j] * scale[j];
        if (v > m) {
            s = s * expf(m - v) + 1.f;  // expf(-inf) = 0 on the first element
            m = v;
        } else {
            s += expf(v - m);
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
        merge(m, s, m2, s2);
    }
    if (lane == 0) { sh_m[warp] = m; sh_s[warp] = s; }
    __syncthreads();
    if (warp == 0) {
        m = lane < WARPS ? sh_m[lane] : -INFINITY;
        s = lane < WARPS ? sh_s[lane] : 0.f;
        for (int off = 16; off > 0; off >>= 1) {
            const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
            const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
            merge(m, s, m2, s2);
        }
        if (lane == 0) { sh_m[0] = m; sh_s[0] = s; }
    }
    __syncthreads();
    const float row_max = sh_m[0];
    const float inv_sum = 1.f / sh_s[0];

    // Pass 2: normalise (the row is still in L2 / L1).
    for (int64_t j = threadIdx.x; j < width; j += THREADS) {
        outr[j] = expf(xr[j] * scale[j] - row_max) * inv_sum;
    }
}

torch::Tensor scaled_softmax(torch::Tensor x, torch::Tensor scale) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t width = x.size(-1);
    if (x.numel() == 0) return out;
    const int64_t rows = x.numel() / width;
    TORCH_CHECK(rows <= 0x7fffffffLL, "too many rows");
    TORCH_CHECK(scale.numel() == width && scale.is_contiguous(), "scale must match the row width");
    scaled_softmax_rows_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), scale.data_ptr<float>(), out.data_ptr<float>(), width);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_collective_all_gather",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["scaled_softmax"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(dim) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        if is_distributed_run():
            gathered = torch.empty(
                (get_world_size() * x.shape[0], x.shape[1]), dtype=x.dtype, device=x.device
            )
            dist.all_gather_into_tensor(gathered, x)
        else:
            gathered = x
        return _ext.scaled_softmax(gathered, self.scale.contiguous())
