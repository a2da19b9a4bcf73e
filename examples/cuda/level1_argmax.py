"""Candidate for problems/level1/7_argmax.py: column-tiled argmax over a middle dimension (32x32 blocks), int64 output with torch's tie and NaN rules.

Like torch.argmax, the first index of the maximum wins, and a NaN counts as larger than any
number (so the first NaN wins). The input is viewed as (outer, R, inner) around the reduced dim.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor argmax_dim(torch::Tensor x, int64_t dim);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

constexpr int TILE = 32;  // blockDim = (32, 32)

// True when (va, ia) should be preferred over (vb, ib).
__device__ __forceinline__ bool better(float va, int64_t ia, float vb, int64_t ib) {
    const bool na = isnan(va), nb = isnan(vb);
    if (na || nb) return na && (!nb || ia < ib);
    return va > vb || (va == vb && ia < ib);
}

__global__ void __launch_bounds__(TILE * TILE)
argmax_middle_kernel(const float* __restrict__ x, int64_t* __restrict__ out,
                     int64_t outer, int64_t R, int64_t inner) {
    __shared__ float sval[TILE][TILE + 1];
    __shared__ int64_t sidx[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * TILE + tx;
    for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
        const float* base = x + o * R * inner;
        float best = -INFINITY;
        int64_t best_i = INT64_MAX;  // "no element yet": loses every comparison below
        if (col < inner) {
            for (int64_t r = ty; r < R; r += TILE) {
                const float v = base[r * inner + col];
                if (better(v, r, best, best_i)) { best = v; best_i = r; }
            }
        }
        sval[ty][tx] = best;
        sidx[ty][tx] = best_i;
        __syncthreads();
        // Warp ty finishes column ty: lane l holds thread row l's candidate.
        float v = sval[tx][ty];
        int64_t i = sidx[tx][ty];
        for (int off = 16; off > 0; off >>= 1) {
            const float v2 = __shfl_xor_sync(0xffffffffu, v, off);
            const int64_t i2 = __shfl_xor_sync(0xffffffffu, i, off);
            if (better(v2, i2, v, i)) { v = v2; i = i2; }
        }
        const int64_t out_col = (int64_t)blockIdx.x * TILE + ty;
        if (tx == 0 && out_col < inner) out[o * inner + out_col] = i;
        __syncthreads();  // sval/sidx are rewritten by the next outer slice
    }
}

torch::Tensor argmax_dim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");
    const int64_t R = x.size(dim);
    TORCH_CHECK(R > 0, "argmax over an empty dimension");

    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= x.size(d);

    auto sizes = x.sizes().vec();
    sizes.erase(sizes.begin() + dim);
    auto out = torch::empty(sizes, x.options().dtype(torch::kInt64));
    if (out.numel() == 0) return out;

    const int64_t col_tiles = (inner + TILE - 1) / TILE;
    TORCH_CHECK(col_tiles <= 0x7fffffffLL, "inner size too large");
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)col_tiles, (unsigned)std::min<int64_t>(outer, 65535));
    argmax_middle_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<int64_t>(), outer, R, inner);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_argmax",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["argmax_dim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.argmax_dim(x, self.dim)
