"""Candidate for problems/level1/3_softmax.py: row-wise softmax over the last dim in C++ (OpenMP).

Per row: the max, exp(x - max) through an inline vectorisable expf (stored), their sum in double,
then a scale by 1 / sum.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>
#include <cstdint>
#include <cstring>

// exp(x) for x <= 0 (Cephes expf: range reduction by ln 2, degree-6 polynomial, 2^n through the
// exponent bits), a plain inline function so the loop that calls it vectorises. Inputs below
// -87.3 are clamped there (exp(-87.3) ~ 1e-38, negligible next to the row sum, which is >= 1).
// The clamp's select only vectorises under -fno-trapping-math (which leaves results unchanged).
static inline float exp_nonpos(float x) {
    x = x < -87.3f ? -87.3f : x;
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
    float r = x - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return p * scale;
}

torch::Tensor softmax_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "softmax_lastdim: x must be a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax_lastdim: x must be float32");
    TORCH_CHECK(x.is_contiguous(), "softmax_lastdim: x must be contiguous");
    TORCH_CHECK(x.dim() >= 1, "softmax_lastdim: x must have at least one dimension");
    auto out = torch::empty_like(x);
    const int64_t width = x.size(-1);
    const int64_t rows = width == 0 ? 0 : x.numel() / width;
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * width;
        float* orow = o + r * width;
        float m = -INFINITY;
        #pragma omp simd reduction(max : m)
        for (int64_t j = 0; j < width; ++j) m = xr[j] > m ? xr[j] : m;
        for (int64_t j = 0; j < width; ++j) orow[j] = exp_nonpos(xr[j] - m);
        double s[4] = {0.0, 0.0, 0.0, 0.0};  // four chains, so the adds overlap
        int64_t j = 0;
        for (; j + 4 <= width; j += 4) {
            s[0] += orow[j];
            s[1] += orow[j + 1];
            s[2] += orow[j + 2];
            s[3] += orow[j + 3];
        }
        for (; j < width; ++j) s[0] += orow[j];
        const float inv = static_cast<float>(1.0 / ((s[0] + s[1]) + (s[2] + s[3])));
        for (int64_t k = 0; k < width; ++k) orow[k] *= inv;
    }
    return out;
}
"""

_ext = load_inline(
    name="kbench_cpu_softmax",
    cpp_sources=_CPP,
    functions=["softmax_lastdim"],
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_lastdim(x.contiguous())
