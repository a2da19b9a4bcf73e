"""Candidate for problems/level1/6_cumsum.py: one block per row, chunked block-wide inclusive scan (thread-local 4-element scan + warp-shuffle scans) with a running carry.

The row is processed in chunks of 1024 elements: a chunk is loaded coalesced into shared memory,
each of the 256 threads scans 4 consecutive values, thread totals are scanned within each warp
with __shfl_up_sync, warp totals are scanned by warp 0, and the carry from earlier chunks is
added before the coalesced store. Works along the last dimension of any contiguous tensor.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor cumsum_lastdim(torch::Tensor x, int64_t dim);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int ITEMS = 4;  // consecutive elements per thread (one float4 in shared memory)
constexpr int CHUNK = THREADS * ITEMS;

__global__ void __launch_bounds__(THREADS)
cumsum_rows_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t L) {
    __shared__ __align__(16) float buf[CHUNK];
    __shared__ float warp_incl[WARPS];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const float* xr = x + (int64_t)blockIdx.x * L;
    float* outr = out + (int64_t)blockIdx.x * L;

    float carry = 0.f;  // sum of all earlier chunks (identical in every thread)
    for (int64_t c0 = 0; c0 < L; c0 += CHUNK) {
        // Coalesced load of the chunk (zeros past the end of the row).
#pragma unroll
        for (int q = 0; q < ITEMS; ++q) {
            const int64_t j = c0 + q * THREADS + tid;
            buf[q * THREADS + tid] = j < L ? xr[j] : 0.f;
        }
        __syncthreads();

        // Thread-local inclusive scan of elements 4*tid .. 4*tid+3.
        float4 v = reinterpret_cast<const float4*>(buf)[tid];
        v.y += v.x;
        v.z += v.y;
        v.w += v.z;

        // Inclusive scan of the thread totals within the warp.
        float incl = v.w;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const float up = __shfl_up_sync(0xffffffffu, incl, off);
            if (lane >= off) incl += up;
        }
        float excl = __shfl_up_sync(0xffffffffu, incl, 1);
        if (lane == 0) excl = 0.f;
        if (lane == 31) warp_incl[warp] = incl;
        __syncthreads();

        // Warp 0 turns the warp totals into an inclusive scan.
        if (warp == 0) {
            float w = lane < WARPS ? warp_incl[lane] : 0.f;
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const float up = __shfl_up_sync(0xffffffffu, w, off);
                if (lane >= off) w += up;
            }
            if (lane < WARPS) warp_incl[lane] = w;
        }
        __syncthreads();

        const float prefix = carry + (warp > 0 ? warp_incl[warp - 1] : 0.f) + excl;
        v.x += prefix;
        v.y += prefix;
        v.z += prefix;
        v.w += prefix;
        reinterpret_cast<float4*>(buf)[tid] = v;
        const float chunk_total = warp_incl[WARPS - 1];
        __syncthreads();

        // Coalesced store.
#pragma unroll
        for (int q = 0; q < ITEMS; ++q) {
            const int64_t j = c0 + q * THREADS + tid;
            if (j < L) outr[j] = buf[q * THREADS + tid];
        }
        carry += chunk_total;
        __syncthreads();  // buf and warp_incl are reused by the next chunk
    }
}

torch::Tensor cumsum_lastdim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    if (dim < 0) dim += x.dim();
    TORCH_CHECK(dim == x.dim() - 1, "this kernel scans along the last dimension only");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::empty_like(x);
    if (x.numel() == 0) return out;
    const int64_t L = x.size(-1);
    const int64_t rows = x.numel() / L;
    TORCH_CHECK(rows <= 0x7fffffffLL, "too many rows");
    cumsum_rows_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), L);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_cumsum",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["cumsum_lastdim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.cumsum_lastdim(x, self.dim)
