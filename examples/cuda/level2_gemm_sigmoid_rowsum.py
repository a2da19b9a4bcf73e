"""Candidate for problems/level2/6_gemm_sigmoid_rowsum.py: tiled GEMM x @ W^T + bias (128x128x8 tiles, 8x8 outputs per thread) whose epilogue applies sigmoid and reduces each row, so the (M, N) activation is never stored.

Per block, each row's 128 sigmoid values are summed in registers and with half-warp shuffles,
then added into out[row] with one atomicAdd (out is zeroed with cudaMemsetAsync on the same
stream first). The N / 128 partial sums of a row arrive in any order, so the last bits of the
result can vary from run to run; the error is far below the tolerance (|out| is about N / 2).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor gemm_sigmoid_rowsum(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

constexpr int BM = 128, BN = 128, BK = 8, PAD = 4, THREADS = 256;

// Loads a 128-row x 8-k tile of a row-major (rows, K) matrix into dst[k][row] (k-major).
__device__ __forceinline__ void load_k_tile(const float* __restrict__ src, int rows, int K,
                                            int row0, int k0, bool vec4, float (*dst)[BM + PAD]) {
    const int r = threadIdx.x >> 1, kq = (threadIdx.x & 1) * 4;
    const int gr = row0 + r, gk = k0 + kq;
    float v[4] = {0.f, 0.f, 0.f, 0.f};
    if (gr < rows) {
        const float* p = src + (int64_t)gr * K + gk;
        if (vec4 && gk + 3 < K) {
            const float4 t = *reinterpret_cast<const float4*>(p);
            v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) if (gk + q < K) v[q] = p[q];
        }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) dst[kq + q][r] = v[q];
}

__device__ __forceinline__ float sigmoid1(float z) { return 1.f / (1.f + expf(-z)); }

// out[M] += sum over this block's columns n of sigmoid(X[M, K] @ W[N, K]^T + bias[N])[m, n].
// out must be zeroed first. vec4: K % 4 == 0 and 16-byte aligned X and W (float4 loads).
__global__ void __launch_bounds__(THREADS)
gemm_sigmoid_rowsum_kernel(const float* __restrict__ X, const float* __restrict__ W,
                           const float* __restrict__ bias, float* __restrict__ out,
                           int M, int N, int K, bool vec4) {
    __shared__ __align__(16) float Xs[BK][BM + PAD];
    __shared__ __align__(16) float Ws[BK][BN + PAD];

    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        load_k_tile(X, M, K, m0, k0, vec4, Xs);
        load_k_tile(W, N, K, n0, k0, vec4, Ws);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a_lo = *reinterpret_cast<const float4*>(&Xs[k][ty * 4]);
            const float4 a_hi = *reinterpret_cast<const float4*>(&Xs[k][64 + ty * 4]);
            const float4 b_lo = *reinterpret_cast<const float4*>(&Ws[k][tx * 4]);
            const float4 b_hi = *reinterpret_cast<const float4*>(&Ws[k][64 + tx * 4]);
            const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    // Epilogue: rows (i < 4 ? ty*4+i : 64+ty*4+i-4), columns half*64 + tx*4 + q. Each thread
    // sums sigmoid over its 8 columns of a row; the 16 threads sharing that row (tx = 0..15, one
    // half-warp, since threadIdx.x = ty*16 + tx) are combined with shuffles, and lane tx == 0 adds
    // the block's partial row sum to out with one atomicAdd. Every lane runs the shuffles.
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int gm = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        float part = 0.f;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int gn = n0 + half * 64 + tx * 4 + q;
                if (gn < N) part += sigmoid1(acc[i][half * 4 + q] + bias[gn]);
            }
        }
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
        if (tx == 0 && gm < M) atomicAdd(out + gm, part);
    }
}

torch::Tensor gemm_sigmoid_rowsum(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "tensors must be float32");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "expected x (M, K), weight (N, K)");
    TORCH_CHECK(bias.numel() == weight.size(0), "bias must have N elements");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = weight.size(0);
    TORCH_CHECK(M < (1LL << 31) && N < (1LL << 31) && K < (1LL << 31), "dimension too large");
    auto out = torch::empty({M, 1}, x.options());
    if (M == 0) return out;
    auto stream = at::cuda::getCurrentCUDAStream();
    C10_CUDA_CHECK(cudaMemsetAsync(out.data_ptr<float>(), 0, M * sizeof(float), stream));
    if (N == 0) return out;

    const bool vec4 = (K % 4 == 0) &&
                      reinterpret_cast<std::uintptr_t>(x.data_ptr<float>()) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(weight.data_ptr<float>()) % 16 == 0;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    TORCH_CHECK(grid.y <= 65535, "M too large for the grid");
    gemm_sigmoid_rowsum_kernel<<<grid, THREADS, 0, stream>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(),
        (int)M, (int)N, (int)K, vec4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_gemm_sigmoid_rowsum",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["gemm_sigmoid_rowsum"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        self.linear = nn.Linear(in_features, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.gemm_sigmoid_rowsum(x, self.linear.weight, self.linear.bias)
