"""Candidate for problems/level2/2_matmul_scale_residual.py: tiled SGEMM (128x128x8 block tiles, 8x8 outputs per thread) with a fused (a @ b) * scale + residual epilogue.

Each of the 256 threads accumulates an 8x8 sub-tile in registers as one fp32 FMA chain over
ascending k; the epilogue reads the residual with float4 loads and rounds the scaled product
before adding the residual, as the reference's separate ops do. Any M, N, K work.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = ("torch::Tensor matmul_scale_residual(torch::Tensor a, torch::Tensor b, "
        "torch::Tensor residual, double scale);")

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

constexpr int BM = 128, BN = 128, BK = 8, PAD = 4, THREADS = 256;

// C[M, N] = (A[M, K] @ B[K, N]) * scale + Res[M, N], all row-major.
// vec4: K % 4 == 0, N % 4 == 0 and 16-byte aligned pointers (float4 paths).
__global__ void __launch_bounds__(THREADS)
sgemm_scale_residual_kernel(const float* __restrict__ A, const float* __restrict__ B,
                            const float* __restrict__ Res, float* __restrict__ C,
                            int M, int N, int K, float scale, bool vec4) {
    __shared__ __align__(16) float As[BK][BM + PAD];  // A tile stored k-major (transposed)
    __shared__ __align__(16) float Bs[BK][BN + PAD];

    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    // Load assignments: A tile 128 rows x 8 k (4 consecutive k per thread);
    // B tile 8 k x 128 cols (4 consecutive cols per thread).
    const int a_row = tid >> 1, a_k = (tid & 1) * 4;
    const int b_k = tid >> 5, b_col = (tid & 31) * 4;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        // ---- load A tile ----
        {
            const int gm = m0 + a_row, gk = k0 + a_k;
            float v[4] = {0.f, 0.f, 0.f, 0.f};
            if (gm < M) {
                const float* src = A + (int64_t)gm * K + gk;
                if (vec4 && gk + 3 < K) {
                    const float4 t = *reinterpret_cast<const float4*>(src);
                    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
                } else {
#pragma unroll
                    for (int q = 0; q < 4; ++q) if (gk + q < K) v[q] = src[q];
                }
            }
#pragma unroll
            for (int q = 0; q < 4; ++q) As[a_k + q][a_row] = v[q];
        }
        // ---- load B tile ----
        {
            const int gk = k0 + b_k, gn = n0 + b_col;
            float4 t = make_float4(0.f, 0.f, 0.f, 0.f);
            if (gk < K) {
                const float* src = B + (int64_t)gk * N + gn;
                if (vec4 && gn + 3 < N) {
                    t = *reinterpret_cast<const float4*>(src);
                } else {
                    if (gn + 0 < N) t.x = src[0];
                    if (gn + 1 < N) t.y = src[1];
                    if (gn + 2 < N) t.z = src[2];
                    if (gn + 3 < N) t.w = src[3];
                }
            }
            *reinterpret_cast<float4*>(&Bs[b_k][b_col]) = t;
        }
        __syncthreads();

        // ---- multiply the tiles ----
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a_lo = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
            const float4 a_hi = *reinterpret_cast<const float4*>(&As[k][64 + ty * 4]);
            const float4 b_lo = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
            const float4 b_hi = *reinterpret_cast<const float4*>(&Bs[k][64 + tx * 4]);
            const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    // ---- epilogue: rows (i < 4 ? ty*4+i : 64+ty*4+i-4), columns likewise with tx ----
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int gm = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (gm >= M) continue;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int gn = n0 + half * 64 + tx * 4;
            const int64_t off = (int64_t)gm * N + gn;
            // The product is rounded before the residual is added, as in the reference's two ops.
            if (vec4 && gn + 3 < N) {
                const float4 res = *reinterpret_cast<const float4*>(Res + off);
                *reinterpret_cast<float4*>(C + off) = make_float4(
                    __fadd_rn(__fmul_rn(acc[i][half * 4 + 0], scale), res.x),
                    __fadd_rn(__fmul_rn(acc[i][half * 4 + 1], scale), res.y),
                    __fadd_rn(__fmul_rn(acc[i][half * 4 + 2], scale), res.z),
                    __fadd_rn(__fmul_rn(acc[i][half * 4 + 3], scale), res.w));
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    if (gn + q < N) C[off + q] = __fadd_rn(__fmul_rn(acc[i][half * 4 + q], scale), Res[off + q]);
            }
        }
    }
}

torch::Tensor matmul_scale_residual(torch::Tensor a, torch::Tensor b, torch::Tensor residual, double scale) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && residual.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32 &&
                residual.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "expected (M, K) @ (K, N)");
    TORCH_CHECK(residual.dim() == 2 && residual.size(0) == a.size(0) && residual.size(1) == b.size(1),
                "residual must be (M, N)");
    const c10::cuda::CUDAGuard guard(a.device());
    a = a.contiguous();
    b = b.contiguous();
    residual = residual.contiguous();
    const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
    TORCH_CHECK(M < (1LL << 31) && N < (1LL << 31) && K < (1LL << 31), "dimension too large");
    auto c = torch::empty({M, N}, a.options());
    if (M == 0 || N == 0) return c;

    const bool vec4 = (K % 4 == 0) && (N % 4 == 0) &&
                      reinterpret_cast<std::uintptr_t>(a.data_ptr<float>()) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(b.data_ptr<float>()) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(residual.data_ptr<float>()) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(c.data_ptr<float>()) % 16 == 0;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    TORCH_CHECK(grid.y <= 65535, "M too large for the grid");
    sgemm_scale_residual_kernel<<<grid, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), residual.data_ptr<float>(), c.data_ptr<float>(),
        (int)M, (int)N, (int)K, (float)scale, vec4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

_ext = load_inline(
    name="kbench_cuda_matmul_scale_residual",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["matmul_scale_residual"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, a: torch.Tensor, b: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return _ext.matmul_scale_residual(a, b, residual, self.scale)
