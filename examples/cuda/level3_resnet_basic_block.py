"""Candidate for problems/level3/2_resnet_basic_block.py: shared-memory tiled 3x3 convolution kernels plus training-mode BatchNorm kernels (per-channel batch statistics, then a fused normalise + residual + ReLU pass).

forward makes six launches: conv1, bn1 statistics, bn1 normalise + ReLU, conv2, bn2 statistics,
bn2 normalise + identity + ReLU. The statistics kernel reduces one channel per block over
(N, H, W) in double precision, normalises with the biased variance, and updates running_mean,
running_var (unbiased, with the module's momentum) and num_batches_tracked on the device, as
nn.BatchNorm2d does in training mode; in eval mode the running statistics are used instead. The
modules are created exactly as in the reference (conv1, bn1, conv2, bn2, relu), so the state
dict matches.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = """
torch::Tensor conv3x3_forward(torch::Tensor x, torch::Tensor weight);
torch::Tensor batchnorm_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                     torch::Tensor running_mean, torch::Tensor running_var,
                                     torch::Tensor num_batches_tracked, bool training, double momentum,
                                     double eps, torch::Tensor residual, bool add_residual);
"""

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

// ---------------------------------------------------------------- 3x3 convolution
constexpr int TILE = 16;      // output pixels per block side
constexpr int OC_T = 16;      // output channels per block
constexpr int IC_T = 8;       // input channels staged per step
constexpr int THREADS = TILE * TILE;
constexpr int KS = 3, KK = KS * KS, PADK = 1;

// x (N, C, H, W), w (OC, C, 3, 3), out (N, OC, H, W); stride 1, padding 1, no bias.
__global__ void __launch_bounds__(THREADS)
conv3x3_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out,
               int C, int H, int W, int OC, int tiles_w) {
    constexpr int IN_T = TILE + KS - 1;
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
    if (oh < H && ow < W) {
#pragma unroll
        for (int o = 0; o < OC_T; ++o) {
            const int oc = oc0 + o;
            if (oc < OC) out[((n * OC + oc) * H + oh) * W + ow] = acc[o];
        }
    }
}


torch::Tensor conv3x3_forward(torch::Tensor x, torch::Tensor weight) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32, "tensors must be float32");
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4 && weight.size(1) == x.size(1) &&
                weight.size(2) == 3 && weight.size(3) == 3, "expected x (N, C, H, W) and weight (OC, C, 3, 3)");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    weight = weight.contiguous();
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), OC = weight.size(0);
    auto out = torch::empty({N, OC, H, W}, x.options());
    if (out.numel() == 0) return out;
    const int64_t tiles_w = (W + TILE - 1) / TILE, tiles_h = (H + TILE - 1) / TILE;
    TORCH_CHECK(tiles_w * tiles_h <= 0x7fffffffLL && N <= 65535 && (OC + OC_T - 1) / OC_T <= 65535,
                "problem too large for the grid");
    dim3 grid((unsigned)(tiles_w * tiles_h), (unsigned)((OC + OC_T - 1) / OC_T), (unsigned)N);
    conv3x3_kernel<<<grid, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), out.data_ptr<float>(),
        (int)C, (int)H, (int)W, (int)OC, (int)tiles_w);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// ---------------------------------------------------------------- BatchNorm2d
constexpr int BN_THREADS = 512;

// One block per channel: mean and biased variance over (N, H, W) in double, written to
// stats[c] = mean, stats[C + c] = 1 / sqrt(var + eps); running statistics updated in place.
__global__ void __launch_bounds__(BN_THREADS)
bn_train_stats_kernel(const float* __restrict__ x, float* __restrict__ stats,
                      float* __restrict__ running_mean, float* __restrict__ running_var,
                      int64_t* __restrict__ num_batches_tracked,
                      int64_t N, int64_t C, int64_t HW, float momentum, float eps) {
    __shared__ double sh_sum[BN_THREADS / 32], sh_sq[BN_THREADS / 32];
    const int64_t c = blockIdx.x;
    const int64_t count = N * HW;
    double sum = 0.0, sq = 0.0;
    for (int64_t n = 0; n < N; ++n) {
        const float* p = x + (n * C + c) * HW;
        for (int64_t i = threadIdx.x; i < HW; i += BN_THREADS) {
            const double v = p[i];
            sum += v;
            sq += v * v;
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
        sq += __shfl_xor_sync(0xffffffffu, sq, off);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sh_sum[warp] = sum; sh_sq[warp] = sq; }
    __syncthreads();
    if (threadIdx.x == 0) {
        sum = 0.0; sq = 0.0;
        for (int w = 0; w < BN_THREADS / 32; ++w) { sum += sh_sum[w]; sq += sh_sq[w]; }
        const double mean = sum / (double)count;
        const double var = fmax(sq / (double)count - mean * mean, 0.0);  // biased
        stats[c] = (float)mean;
        stats[C + c] = (float)(1.0 / sqrt(var + (double)eps));
        const double unbiased = count > 1 ? var * (double)count / (double)(count - 1) : var;
        running_mean[c] = (float)((1.0 - momentum) * running_mean[c] + momentum * mean);
        running_var[c] = (float)((1.0 - momentum) * running_var[c] + momentum * unbiased);
        if (c == 0 && num_batches_tracked != nullptr) *num_batches_tracked += 1;
    }
}

__global__ void bn_eval_stats_kernel(const float* __restrict__ running_mean, const float* __restrict__ running_var,
                                     float* __restrict__ stats, int64_t C, float eps) {
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        stats[c] = running_mean[c];
        stats[C + c] = 1.f / sqrtf(running_var[c] + eps);
    }
}

// y = relu((x - mean[c]) * invstd[c] * weight[c] + bias[c] (+ residual)), elementwise.
__global__ void bn_apply_relu_kernel(const float* __restrict__ x, const float* __restrict__ stats,
                                     const float* __restrict__ weight, const float* __restrict__ bias,
                                     const float* __restrict__ residual, float* __restrict__ out,
                                     int64_t total, int64_t C, int64_t HW) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        const int64_t c = (i / HW) % C;
        float v = (x[i] - stats[c]) * stats[C + c] * weight[c] + bias[c];
        if (residual != nullptr) v += residual[i];
        out[i] = v < 0.f ? 0.f : v;
    }
}

torch::Tensor batchnorm_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                     torch::Tensor running_mean, torch::Tensor running_var,
                                     torch::Tensor num_batches_tracked, bool training, double momentum,
                                     double eps, torch::Tensor residual, bool add_residual) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda() && running_mean.is_cuda() &&
                running_var.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() == 4, "x must be (N, C, H, W)");
    const c10::cuda::CUDAGuard guard(x.device());
    TORCH_CHECK(x.is_contiguous() && running_mean.is_contiguous() && running_var.is_contiguous(),
                "x and the running statistics must be contiguous");
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int64_t N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
    TORCH_CHECK(weight.numel() == C && bias.numel() == C && running_mean.numel() == C && running_var.numel() == C,
                "per-channel tensors must have C elements");
    if (add_residual) {
        TORCH_CHECK(residual.is_cuda() && residual.sizes() == x.sizes(), "residual must match x");
        residual = residual.contiguous();
    }
    auto out = torch::empty_like(x);
    const int64_t total = x.numel();
    if (total == 0) return out;
    auto stream = at::cuda::getCurrentCUDAStream();
    auto stats = torch::empty({2 * C}, x.options());

    if (training) {
        TORCH_CHECK(num_batches_tracked.is_cuda() && num_batches_tracked.scalar_type() == torch::kInt64,
                    "num_batches_tracked must be an int64 CUDA tensor");
        TORCH_CHECK(C <= 0x7fffffffLL, "too many channels");
        bn_train_stats_kernel<<<(unsigned)C, BN_THREADS, 0, stream>>>(
            x.data_ptr<float>(), stats.data_ptr<float>(), running_mean.data_ptr<float>(),
            running_var.data_ptr<float>(), num_batches_tracked.data_ptr<int64_t>(),
            N, C, HW, (float)momentum, (float)eps);
    } else {
        bn_eval_stats_kernel<<<(unsigned)((C + 255) / 256), 256, 0, stream>>>(
            running_mean.data_ptr<float>(), running_var.data_ptr<float>(), stats.data_ptr<float>(), C, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, (int64_t)sms * 32);
    bn_apply_relu_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
        x.data_ptr<float>(), stats.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
        add_residual ? residual.data_ptr<float>() : nullptr, out.data_ptr<float>(), total, C, HW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_resnet_basic_block",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["conv3x3_forward", "batchnorm_relu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


def _bn_relu(bn: nn.BatchNorm2d, x: torch.Tensor, residual=None) -> torch.Tensor:
    if bn.momentum is None or bn.running_mean is None or not bn.affine:
        raise NotImplementedError("this candidate expects BatchNorm2d's defaults (affine, momentum, running stats)")
    return _ext.batchnorm_relu_forward(
        x, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.num_batches_tracked,
        bn.training, float(bn.momentum), float(bn.eps),
        residual if residual is not None else x, residual is not None)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = _bn_relu(self.bn1, _ext.conv3x3_forward(x, self.conv1.weight))
        out = _ext.conv3x3_forward(out, self.conv2.weight)
        return _bn_relu(self.bn2, out, residual=x)
