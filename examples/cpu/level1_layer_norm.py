"""Candidate for problems/level1/4_layer_norm.py: LayerNorm over the last dim in C++ (OpenMP).

Keeps an nn.LayerNorm for its parameters (same order and init as the reference) and passes its
weight, bias and eps to a two-pass (mean, then variance, in double) kernel.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor layer_norm_lastdim(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    for (const auto& t : {x, weight, bias}) {
        TORCH_CHECK(t.device().is_cpu(), "layer_norm_lastdim: tensors must be on the CPU");
        TORCH_CHECK(t.scalar_type() == torch::kFloat32, "layer_norm_lastdim: tensors must be float32");
        TORCH_CHECK(t.is_contiguous(), "layer_norm_lastdim: tensors must be contiguous");
    }
    const int64_t width = x.size(-1);
    TORCH_CHECK(weight.numel() == width && bias.numel() == width, "layer_norm_lastdim: bad weight/bias size");
    auto out = torch::empty_like(x);
    const int64_t rows = width == 0 ? 0 : x.numel() / width;
    const float* in = x.data_ptr<float>();
    const float* w = weight.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    float* o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * width;
        float* orow = o + r * width;
        double sum = 0.0;
        for (int64_t j = 0; j < width; ++j) sum += xr[j];
        const double mean = sum / width;
        double sq = 0.0;
        for (int64_t j = 0; j < width; ++j) {
            const double d = xr[j] - mean;
            sq += d * d;
        }
        const double rstd = 1.0 / std::sqrt(sq / width + eps);
        const float fmean = static_cast<float>(mean);
        const float frstd = static_cast<float>(rstd);
        for (int64_t j = 0; j < width; ++j) orow[j] = (xr[j] - fmean) * frstd * w[j] + b[j];
    }
    return out;
}
"""

_ext = load_inline(
    name="kbench_cpu_layer_norm",
    cpp_sources=_CPP,
    functions=["layer_norm_lastdim"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: int):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.layer_norm_lastdim(
            x.contiguous(), self.ln.weight.contiguous(), self.ln.bias.contiguous(), self.ln.eps
        )
