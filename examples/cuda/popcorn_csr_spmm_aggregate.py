"""Candidate for problems/popcorn/3_csr_spmm_aggregate.py: warp-per-row CSR SpMM (edge metadata loaded 32 at a time and broadcast with shuffles, coalesced feature rows).

Row i of the output is owned by one warp, which walks row_ptr[i]..row_ptr[i+1]: the lanes load
32 (col, value) pairs at once, then for each edge every lane gathers its feature columns of
features[col] (lane, lane+32, ... : coalesced) and accumulates value * feature in registers.
Empty rows are written as zeros. The node count, edge count and feature width all come from the
input tensors, since the popcorn variant jitters them per trial.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = ("torch::Tensor csr_spmm(torch::Tensor row_ptr, torch::Tensor col_idx, "
        "torch::Tensor values, torch::Tensor features);")

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int PER_LANE = 4;                  // feature columns per lane per pass
constexpr int FCHUNK = 32 * PER_LANE;        // feature columns per pass (128)

__global__ void __launch_bounds__(THREADS)
csr_spmm_kernel(const int64_t* __restrict__ row_ptr, const int64_t* __restrict__ col_idx,
                const float* __restrict__ values, const float* __restrict__ feat,
                float* __restrict__ out, int64_t num_rows, int64_t F) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= num_rows) return;  // whole warp leaves together
    const int64_t start = row_ptr[row], end = row_ptr[row + 1];
    float* out_row = out + row * F;

    for (int64_t f0 = 0; f0 < F; f0 += FCHUNK) {
        float acc[PER_LANE];
#pragma unroll
        for (int q = 0; q < PER_LANE; ++q) acc[q] = 0.f;

        for (int64_t e0 = start; e0 < end; e0 += 32) {
            const int64_t e = e0 + lane;
            const int64_t my_col = e < end ? col_idx[e] : 0;
            const float my_val = e < end ? values[e] : 0.f;
            const int count = end - e0 < 32 ? (int)(end - e0) : 32;
            for (int t = 0; t < count; ++t) {
                const int64_t c = __shfl_sync(0xffffffffu, my_col, t);
                const float v = __shfl_sync(0xffffffffu, my_val, t);
                const float* frow = feat + c * F + f0;
#pragma unroll
                for (int q = 0; q < PER_LANE; ++q) {
                    const int64_t f = lane + 32 * q;
                    if (f0 + f < F) acc[q] = fmaf(v, frow[f], acc[q]);
                }
            }
        }
#pragma unroll
        for (int q = 0; q < PER_LANE; ++q) {
            const int64_t f = f0 + lane + 32 * q;
            if (f < F) out_row[f] = acc[q];
        }
    }
}

torch::Tensor csr_spmm(torch::Tensor row_ptr, torch::Tensor col_idx, torch::Tensor values, torch::Tensor features) {
    TORCH_CHECK(row_ptr.is_cuda() && col_idx.is_cuda() && values.is_cuda() && features.is_cuda(),
                "all inputs must be CUDA tensors");
    TORCH_CHECK(row_ptr.scalar_type() == torch::kInt64 && col_idx.scalar_type() == torch::kInt64,
                "row_ptr and col_idx must be int64");
    TORCH_CHECK(values.scalar_type() == torch::kFloat32 && features.scalar_type() == torch::kFloat32,
                "values and features must be float32");
    TORCH_CHECK(row_ptr.dim() == 1 && row_ptr.numel() >= 1, "row_ptr must be 1-D with num_nodes + 1 entries");
    TORCH_CHECK(features.dim() == 2, "features must be (num_nodes, F)");
    TORCH_CHECK(col_idx.numel() == values.numel(), "col_idx and values must have one entry per edge");
    const c10::cuda::CUDAGuard guard(features.device());
    row_ptr = row_ptr.contiguous();
    col_idx = col_idx.contiguous();
    values = values.contiguous();
    features = features.contiguous();
    const int64_t num_rows = row_ptr.numel() - 1;
    const int64_t F = features.size(1);
    auto out = torch::empty({num_rows, F}, features.options());
    if (num_rows == 0 || F == 0) return out;

    const int64_t blocks = (num_rows + WARPS - 1) / WARPS;
    TORCH_CHECK(blocks <= 0x7fffffffLL, "too many rows");
    csr_spmm_kernel<<<(unsigned)blocks, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        row_ptr.data_ptr<int64_t>(), col_idx.data_ptr<int64_t>(), values.data_ptr<float>(),
        features.data_ptr<float>(), out.data_ptr<float>(), num_rows, F);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_csr_spmm",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["csr_spmm"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self,
        row_ptr: torch.Tensor,
        col_idx: torch.Tensor,
        values: torch.Tensor,
        features: torch.Tensor,
    ) -> torch.Tensor:
        return _ext.csr_spmm(row_ptr, col_idx, values, features)
