"""Candidate for problems/level1/11_transpose.py: 32x32 shared-memory tiled transpose (padded tile, coalesced reads and writes).

A (32, 8) block copies a 32x32 tile of x (R x C) into shared memory row by row, then writes it
out column by column into out (C x R); the +1 padding keeps the column reads bank-conflict free.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor transpose_2d(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

constexpr int TILE = 32, ROWS_PER_PASS = 8;  // blockDim = (32, 8)

__global__ void __launch_bounds__(TILE * ROWS_PER_PASS)
transpose_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t R, int64_t C) {
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t r0 = (int64_t)blockIdx.y * TILE, c0 = (int64_t)blockIdx.x * TILE;

    // Read rows r0..r0+31 of x, columns c0+tx (coalesced along the row).
    for (int j = ty; j < TILE; j += ROWS_PER_PASS) {
        const int64_t r = r0 + j, c = c0 + tx;
        if (r < R && c < C) tile[j][tx] = x[r * C + c];
    }
    __syncthreads();
    // Write rows c0..c0+31 of out, columns r0+tx (coalesced along the output row).
    for (int j = ty; j < TILE; j += ROWS_PER_PASS) {
        const int64_t oc = c0 + j, orow = r0 + tx;
        if (oc < C && orow < R) out[oc * R + orow] = tile[tx][j];
    }
}

torch::Tensor transpose_2d(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() == 2, "x must be 2-D");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    const int64_t R = x.size(0), C = x.size(1);
    auto out = torch::empty({C, R}, x.options());
    if (R == 0 || C == 0) return out;
    const int64_t gx = (C + TILE - 1) / TILE, gy = (R + TILE - 1) / TILE;
    TORCH_CHECK(gx <= 0x7fffffffLL && gy <= 65535, "matrix too large for the grid");
    dim3 block(TILE, ROWS_PER_PASS);
    dim3 grid((unsigned)gx, (unsigned)gy);
    transpose_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), R, C);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_transpose",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["transpose_2d"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.transpose_2d(x)
