"""Candidate for examples/problems/linear_relu_small.py: the weight transposed once and cached, then a C++ loop (OpenMP) over the transposed copy.

The CPU analogue of examples/cuda/level2_linear_relu_pretransposed.py. nn.Linear keeps W as
(out, in); the first call (and any call after the weight changed: a new storage or an in-place
update bumps its version) copies it transposed into an (in, out) buffer, so that the i-k-j loop
reads rows of both operands and its inner loop over the outputs vectorises. Every call computes
x @ W^T + b from its own inputs, summing over k in ascending order; kbench must pass it.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <algorithm>

torch::Tensor transpose_weight(torch::Tensor weight) {
    TORCH_CHECK(weight.device().is_cpu() && weight.scalar_type() == torch::kFloat32 && weight.dim() == 2,
                "weight must be a 2-D CPU float32 tensor");
    weight = weight.contiguous();
    const int64_t rows = weight.size(0), cols = weight.size(1);
    auto wt = torch::empty({cols, rows}, weight.options());
    const float* w = weight.data_ptr<float>();
    float* t = wt.data_ptr<float>();
    constexpr int64_t B = 32;  // 32x32 blocks: both sides stay in cache
    #pragma omp parallel for schedule(static)
    for (int64_t r0 = 0; r0 < rows; r0 += B)
        for (int64_t c0 = 0; c0 < cols; c0 += B)
            for (int64_t r = r0; r < std::min(r0 + B, rows); ++r)
                for (int64_t c = c0; c < std::min(c0 + B, cols); ++c) t[c * rows + r] = w[r * cols + c];
    return wt;
}

// out = relu(x @ WT + bias) with WT (K, N), the transposed weight.
torch::Tensor linear_relu_pretransposed(torch::Tensor x, torch::Tensor weight_t, torch::Tensor bias) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "x must be a CPU float32 tensor");
    TORCH_CHECK(x.dim() == 2 && weight_t.dim() == 2 && x.size(1) == weight_t.size(0),
                "expected x (M, K) and the transposed weight (K, N)");
    TORCH_CHECK(bias.numel() == weight_t.size(1), "bias must have N elements");
    x = x.contiguous();
    weight_t = weight_t.contiguous();
    bias = bias.contiguous();
    const int64_t M = x.size(0), K = x.size(1), N = weight_t.size(1);
    auto out = torch::empty({M, N}, x.options());
    const float* X = x.data_ptr<float>();
    const float* WT = weight_t.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    float* O = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i) {
        float* row = O + i * N;
        for (int64_t j = 0; j < N; ++j) row[j] = 0.f;
        for (int64_t k = 0; k < K; ++k) {
            const float xik = X[i * K + k];
            const float* wrow = WT + k * N;
            for (int64_t j = 0; j < N; ++j) row[j] += xik * wrow[j];
        }
        for (int64_t j = 0; j < N; ++j) {
            const float v = row[j] + b[j];
            row[j] = v < 0.f ? 0.f : v;
        }
    }
    return out;
}
"""

_ext = load_inline(
    name="kbench_cpu_linear_relu_pretransposed",
    cpp_sources=_CPP,
    functions=["transpose_weight", "linear_relu_pretransposed"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self._weight_t = None
        self._weight_key = None  # (storage address, version) the cached transpose is of

    def _transposed_weight(self):
        weight = self.linear.weight
        key = (weight.data_ptr(), weight._version)
        if key != self._weight_key:
            self._weight_t = _ext.transpose_weight(weight.detach())
            self._weight_key = key
        return self._weight_t

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.linear_relu_pretransposed(x, self._transposed_weight(), self.linear.bias.detach())
