"""Candidate for problems/level1/5_sum_reduction.py: column-tiled reduction over a middle dimension (32x32 blocks, shared-memory transpose, warp-shuffle finish).

The input is viewed as (outer, R, inner) around the reduced dim. A block owns 32 adjacent inner
columns of one outer slice: its 32 thread rows stride over R with coalesced 128-byte loads, and
the 32 partial sums of each column are combined by one warp.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor sum_dim_keepdim(torch::Tensor x, int64_t dim);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

constexpr int TILE = 32;  // blockDim = (32, 32)

__global__ void __launch_bounds__(TILE * TILE)
sum_middle_kernel(const float* __restrict__ x, float* __restrict__ out,
                  int64_t outer, int64_t R, int64_t inner) {
    __shared__ float partial[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * TILE + tx;
    for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
        const float* base = x + o * R * inner;
        float acc = 0.f;
        if (col < inner) {
            for (int64_t r = ty; r < R; r += TILE) acc += base[r * inner + col];
        }
        partial[ty][tx] = acc;
        __syncthreads();
        // Warp ty finishes column ty of the tile: lane l holds thread row l's partial sum.
        float v = partial[tx][ty];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        const int64_t out_col = (int64_t)blockIdx.x * TILE + ty;
        if (tx == 0 && out_col < inner) out[o * inner + out_col] = v;
        __syncthreads();  // partial is rewritten by the next outer slice
    }
}

torch::Tensor sum_dim_keepdim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");

    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= x.size(d);
    const int64_t R = x.size(dim);

    auto sizes = x.sizes().vec();
    sizes[dim] = 1;
    auto out = torch::empty(sizes, x.options());
    if (out.numel() == 0) return out;

    const int64_t col_tiles = (inner + TILE - 1) / TILE;
    TORCH_CHECK(col_tiles <= 0x7fffffffLL, "inner size too large");
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)col_tiles, (unsigned)std::min<int64_t>(outer, 65535));
    sum_middle_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), outer, R, inner);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_sum_reduction",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["sum_dim_keepdim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_dim_keepdim(x, self.dim)
