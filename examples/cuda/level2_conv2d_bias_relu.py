"""Candidate for problems/level2/3_conv2d_bias_relu.py: direct 2D convolution (stride 1, "same" zero padding) tiled in shared memory, with conv bias + extra per-channel bias + ReLU fused into the store.

A block of 256 threads owns one image, 16 output channels and a 16x16 pixel tile. It walks the
input channels 8 at a time: the (16+k-1)^2 input patch of those channels (zero-padded at the
borders) and their k*k weights for the 16 output channels are staged in shared memory, then every
thread accumulates its pixel for all 16 output channels (weights read as broadcast float4s).
The epilogue computes relu((conv + conv.bias) + bias) in the reference's rounding order before
the single store. Kernel sizes 1, 3, 5 and 7 are compiled in. The parameters are created as in
the reference: nn.Conv2d first, then the (OC, 1, 1) bias parameter from torch.randn * 0.1.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = ("torch::Tensor conv2d_bias_relu_forward(torch::Tensor x, torch::Tensor weight, "
        "torch::Tensor conv_bias, torch::Tensor extra_bias);")

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdint>

constexpr int TILE = 16;      // output pixels per block side
constexpr int OC_T = 16;      // output channels per block
constexpr int IC_T = 8;       // input channels staged per step
constexpr int THREADS = TILE * TILE;

// x (N, C, H, W), w (OC, C, KS, KS), bias and bias2 (OC), out (N, OC, Ho, Wo); stride 1,
// padding KS/2; out = relu(conv + bias + bias2).
template <int KS>
__global__ void __launch_bounds__(THREADS)
conv2d_bias_relu_kernel(const float* __restrict__ x, const float* __restrict__ w,
                        const float* __restrict__ bias, const float* __restrict__ bias2,
                        float* __restrict__ out, int C, int H, int W, int OC, int Ho, int Wo,
                        int tiles_w) {
    constexpr int IN_T = TILE + KS - 1;
    constexpr int PADK = KS / 2;
    constexpr int KK = KS * KS;
    __shared__ float xs[IC_T][IN_T][IN_T];
    __shared__ __align__(16) float ws[IC_T][KK][OC_T];

    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    const int oh0 = (blockIdx.x / tiles_w) * TILE, ow0 = (blockIdx.x % tiles_w) * TILE;
    const int oc0 = blockIdx.y * OC_T;
    const int64_t n = blockIdx.z;

    float acc[OC_T];
#pragma unroll
    for (int o = 0; o < OC_T; ++o) acc[o] = 0.f;

    for (int c0 = 0; c0 < C; c0 += IC_T) {
        // Input patch: rows oh0-PADK .. oh0-PADK+IN_T-1, same for columns, zero outside.
        for (int idx = threadIdx.x; idx < IC_T * IN_T * IN_T; idx += THREADS) {
            const int ic = idx / (IN_T * IN_T), rem = idx % (IN_T * IN_T);
            const int iy = rem / IN_T, ix = rem % IN_T;
            const int gy = oh0 - PADK + iy, gx = ow0 - PADK + ix, c = c0 + ic;
            float v = 0.f;
            if (c < C && gy >= 0 && gy < H && gx >= 0 && gx < W) v = x[((n * C + c) * H + gy) * W + gx];
            xs[ic][iy][ix] = v;
        }
        // Weights of 16 output channels x 8 input channels, read along (ic, ky, kx) contiguously.
        for (int idx = threadIdx.x; idx < OC_T * IC_T * KK; idx += THREADS) {
            const int kk = idx % KK, ic = (idx / KK) % IC_T, oc = idx / (KK * IC_T);
            float v = 0.f;
            if (oc0 + oc < OC && c0 + ic < C) v = w[((int64_t)(oc0 + oc) * C + (c0 + ic)) * KK + kk];
            ws[ic][kk][oc] = v;
        }
        __syncthreads();

#pragma unroll 2
        for (int ic = 0; ic < IC_T; ++ic) {
#pragma unroll
            for (int ky = 0; ky < KS; ++ky) {
#pragma unroll
                for (int kx = 0; kx < KS; ++kx) {
                    const float v = xs[ic][ty + ky][tx + kx];
                    const float4* wp = reinterpret_cast<const float4*>(&ws[ic][ky * KS + kx][0]);
#pragma unroll
                    for (int o4 = 0; o4 < OC_T / 4; ++o4) {
                        const float4 wv = wp[o4];
                        acc[4 * o4 + 0] = fmaf(v, wv.x, acc[4 * o4 + 0]);
                        acc[4 * o4 + 1] = fmaf(v, wv.y, acc[4 * o4 + 1]);
                        acc[4 * o4 + 2] = fmaf(v, wv.z, acc[4 * o4 + 2]);
                        acc[4 * o4 + 3] = fmaf(v, wv.w, acc[4 * o4 + 3]);
                    }
                }
            }
        }
        __syncthreads();
    }

    const int oh = oh0 + ty, ow = ow0 + tx;
    if (oh < Ho && ow < Wo) {
#pragma unroll
        for (int o = 0; o < OC_T; ++o) {
            const int oc = oc0 + o;
            if (oc < OC) {
                const float v = (acc[o] + bias[oc]) + bias2[oc];
                out[((n * OC + oc) * Ho + oh) * Wo + ow] = v < 0.f ? 0.f : v;
            }
        }
    }
}

torch::Tensor conv2d_bias_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                       torch::Tensor bias2) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda() && bias2.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32 && bias2.scalar_type() == torch::kFloat32,
                "tensors must be float32");
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4, "expected x (N, C, H, W) and weight (OC, C, k, k)");
    TORCH_CHECK(weight.size(1) == x.size(1), "channel mismatch");
    TORCH_CHECK(weight.size(2) == weight.size(3), "square kernels only");
    TORCH_CHECK(bias.numel() == weight.size(0) && bias2.numel() == weight.size(0), "biases must have OC elements");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    bias2 = bias2.contiguous();
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t OC = weight.size(0), KS = weight.size(2);
    const int64_t pad = KS / 2;
    const int64_t Ho = H + 2 * pad - KS + 1, Wo = W + 2 * pad - KS + 1;
    TORCH_CHECK(Ho > 0 && Wo > 0, "input smaller than the kernel");
    auto out = torch::empty({N, OC, Ho, Wo}, x.options());
    if (out.numel() == 0) return out;

    const int64_t tiles_w = (Wo + TILE - 1) / TILE, tiles_h = (Ho + TILE - 1) / TILE;
    TORCH_CHECK(tiles_w * tiles_h <= 0x7fffffffLL && N <= 65535 && (OC + OC_T - 1) / OC_T <= 65535,
                "problem too large for the grid");
    dim3 grid((unsigned)(tiles_w * tiles_h), (unsigned)((OC + OC_T - 1) / OC_T), (unsigned)N);
    auto stream = at::cuda::getCurrentCUDAStream();
#define KBENCH_CONV_LAUNCH(K)                                                                     \
    conv2d_bias_relu_kernel<K><<<grid, THREADS, 0, stream>>>(                                     \
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), bias2.data_ptr<float>(), \
        out.data_ptr<float>(),                                                                    \
        (int)C, (int)H, (int)W, (int)OC, (int)Ho, (int)Wo, (int)tiles_w)
    switch (KS) {
        case 1: KBENCH_CONV_LAUNCH(1); break;
        case 3: KBENCH_CONV_LAUNCH(3); break;
        case 5: KBENCH_CONV_LAUNCH(5); break;
        case 7: KBENCH_CONV_LAUNCH(7); break;
        default: TORCH_CHECK(false, "kernel size must be 1, 3, 5 or 7, got ", KS);
    }
#undef KBENCH_CONV_LAUNCH
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_conv2d_bias_relu",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["conv2d_bias_relu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.conv2d_bias_relu_forward(x, self.conv.weight, self.conv.bias, self.bias)
