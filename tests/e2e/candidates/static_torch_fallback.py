"""Test fixture for `kbench check`: a CUDA kernel that is wrapped in try/except and falls back to
torch.relu; the static check must reject it (rule `fallback`)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
__global__ void relu_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

_ext = load_inline(name="kbench_static_fallback", cpp_sources="torch::Tensor relu_forward(torch::Tensor x);",
                   cuda_sources=_CUDA, functions=["relu_forward"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        try:
            return _ext.relu_forward(x)
        except RuntimeError:
            return torch.relu(x)
