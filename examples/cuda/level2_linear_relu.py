"""Candidate for problems/level2/1_linear_relu.py: fused tiled GEMM x @ W^T + bias with a ReLU epilogue (128x128x8 tiles, 8x8 outputs per thread).

W is nn.Linear's (out_features, in_features) weight, so both operands are read along k: each
thread loads 4 consecutive k of one row and stores them k-major into shared memory. Every output
is one fp32 FMA chain over ascending k; the bias and ReLU are applied before the single store.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

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

// C[M, N] = relu(X[M, K] @ W[N, K]^T + bias[N]). vec4: K % 4 == 0, N % 4 == 0, 16-byte aligned.
__global__ void __launch_bounds__(THREADS)
linear_relu_kernel(const float* __restrict__ X, const float* __restrict__ W,
                   const float* __restrict__ bias, float* __restrict__ C,
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

    // Epilogue: rows (i < 4 ? ty*4+i : 64+ty*4+i-4), columns half*64 + tx*4 + q.
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int gm = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (gm >= M) continue;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int gn = n0 + half * 64 + tx * 4;
            float r[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const float v = gn + q < N ? acc[i][half * 4 + q] + bias[gn + q] : 0.f;
                r[q] = v < 0.f ? 0.f : v;
            }
            float* dst = C + (int64_t)gm * N + gn;
            if (vec4 && gn + 3 < N) {
                *reinterpret_cast<float4*>(dst) = make_float4(r[0], r[1], r[2], r[3]);
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q) if (gn + q < N) dst[q] = r[q];
            }
        }
    }
}

torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
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
    auto out = torch::empty({M, N}, x.options());
    if (M == 0 || N == 0) return out;

    const bool vec4 = (K % 4 == 0) && (N % 4 == 0) &&
                      reinterpret_cast<std::uintptr_t>(x.data_ptr<float>()) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(weight.data_ptr<float>()) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(out.data_ptr<float>()) % 16 == 0;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    TORCH_CHECK(grid.y <= 65535, "M too large for the grid");
    linear_relu_kernel<<<grid, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(),
        (int)M, (int)N, (int)K, vec4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_linear_relu",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["linear_relu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.linear_relu_forward(x, self.linear.weight, self.linear.bias)
