"""Candidate for problems/level1/1_relu.py: the ReLU split over two streams, the caller's and a side stream, joined with events.

Honest use of a second stream: the side stream first waits on an event recorded on the caller's
stream (so it sees the inputs the caller's work made), runs its half, and records an event the
caller's stream waits on before forward returns. Everything the call does is finished when the
caller's stream is, which is what a timer on that stream measures; kbench must pass it.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor relu_two_streams(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

// out[i] = max(x[i], 0) over float4 chunks [0, n4); NaN stays NaN, as torch.relu keeps it.
__global__ void relu4_kernel(const float4* __restrict__ x, float4* __restrict__ out, int64_t n4) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        const float4 v = x[i];
        out[i] = make_float4(v.x < 0.f ? 0.f : v.x, v.y < 0.f ? 0.f : v.y,
                             v.z < 0.f ? 0.f : v.z, v.w < 0.f ? 0.f : v.w);
    }
}

// Scalar elements [begin, n): the tail after the float4 chunks, or all of them when unaligned.
__global__ void relu_scalar_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t begin, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = begin + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = x[i] < 0.f ? 0.f : x[i];
}

static void launch_relu4(const float* x, float* out, int64_t n4, cudaStream_t stream) {
    if (n4 == 0) return;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t blocks = std::min<int64_t>((n4 + 255) / 256, (int64_t)sms * 8);
    relu4_kernel<<<(unsigned)blocks, 256, 0, stream>>>(reinterpret_cast<const float4*>(x),
                                                        reinterpret_cast<float4*>(out), n4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

torch::Tensor relu_two_streams(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a CUDA float32 tensor");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return out;
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                         reinterpret_cast<std::uintptr_t>(o) % 16 == 0;
    const int64_t n4 = aligned ? n / 4 : 0;
    const int64_t first4 = n4 / 2;  // the caller's stream takes [0, first4), the side stream the rest

    at::cuda::CUDAStream caller = at::cuda::getCurrentCUDAStream();
    at::cuda::CUDAStream side = at::cuda::getStreamFromPool(false, x.device().index());
    at::cuda::CUDAEvent inputs_ready, side_done;
    inputs_ready.record(caller);
    inputs_ready.block(side);  // the side stream starts after everything queued on the caller's

    launch_relu4(in + 4 * first4, o + 4 * first4, n4 - first4, side.stream());
    launch_relu4(in, o, first4, caller.stream());
    if (4 * n4 < n) {
        const int64_t blocks = std::min<int64_t>((n - 4 * n4 + 255) / 256, 4096);
        relu_scalar_kernel<<<(unsigned)blocks, 256, 0, caller.stream()>>>(in, o, 4 * n4, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }

    side_done.record(side);
    side_done.block(caller);  // the join: the caller's stream waits for the side stream's half
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_relu_side_stream",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["relu_two_streams"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_two_streams(x)
