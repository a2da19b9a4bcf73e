"""Broken CUDA candidate for problems/level1/1_relu.py: an off-by-one skips the last column of every row.

One block handles one row, and its loop bound is `j < cols - 1` instead of `j < cols`, so
out[row, cols - 1] is never written. The output is allocated with torch::zeros (not empty), so
that element is deterministically 0 rather than leftover memory that could by chance already hold
the right value: it is wrong wherever x[row, cols - 1] > 0, about half of the 4096 rows, and
right everywhere else.

The candidate compiles and runs without any CUDA error. kbench must report it as incorrect: an
output mismatch with the right shape and dtype, roughly 2,000 mismatching elements, all in the
last column (index [row, 8191]), and a max absolute error equal to the largest positive value in
that column (typically 3-4). It must not be timed or reported as a passing kernel.
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
#include <cstdint>

__global__ void relu_rows_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* outr = out + (int64_t)blockIdx.x * cols;
    for (int64_t j = threadIdx.x; j < cols - 1; j += blockDim.x) {  // BUG (deliberate): should be j < cols
        const float v = xr[j];
        outr[j] = v < 0.f ? 0.f : v;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto out = torch::zeros_like(x);
    if (x.numel() == 0) return out;
    const int64_t cols = x.size(-1);
    const int64_t rows = x.numel() / cols;
    relu_rows_kernel<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(
    name="kbench_cuda_broken_wrong_result",
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
