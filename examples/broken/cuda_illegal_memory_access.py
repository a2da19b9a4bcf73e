"""Broken CUDA candidate for problems/level1/1_relu.py: the kernel writes far outside its output.

Every thread stores relu(x[i]) to out[i + offset] with offset = 2^36 floats (256 GiB past the
output, beyond the H200's whole memory), so the store hits unmapped device memory. The launch
itself succeeds (C10_CUDA_KERNEL_LAUNCH_CHECK passes); the fault surfaces asynchronously at the
next synchronisation as "an illegal memory access was encountered" (cudaErrorIllegalAddress),
which leaves the CUDA context unusable.

kbench must report this candidate as a CUDA runtime error (illegal memory access) for the trial,
not as a wrong result or a compile error, and must survive it: the poisoned context belongs to the
worker process, which has to be replaced before any other candidate runs.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor relu_forward(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>
#include <cstdint>

// BUG (deliberate): the store index is shifted by `offset`, passed at run time so the compiler
// cannot see (or drop) the out-of-bounds address.
__global__ void relu_oob_kernel(const float* __restrict__ x, float* __restrict__ out,
                                int64_t n, int64_t offset) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        out[i + offset] = v < 0.f ? 0.f : v;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 4096);
    const int64_t offset = int64_t(1) << 36;  // 2^36 floats = 256 GiB past the output
    relu_oob_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), n, offset);
    C10_CUDA_KERNEL_LAUNCH_CHECK();  // passes: the fault is reported asynchronously
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_broken_illegal_access",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["relu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x)
