"""Masked broadcast from row 0 on the CPU (C++, OpenMP): the first version, which does not build.

forward_rows() calls pick() before any declaration of it: C++ needs one.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor masked_broadcast_row0(torch::Tensor x, torch::Tensor mask) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.dim() == 2,
                "x must be a 2-D float32 CPU tensor");
    x = x.contiguous();
    auto keep = mask.to(torch::kBool).contiguous();
    auto out = torch::empty_like(x);
    const int64_t rows = x.size(0), cols = x.size(1);
    const float* in = x.data_ptr<float>();
    const bool* m = keep.data_ptr<bool>();
    float* o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
            o[r * cols + c] = pick(in, m, r, c, cols);
        }
    }
    return out;
}

inline float pick(const float* in, const bool* m, int64_t r, int64_t c, int64_t cols) {
    return m[c] ? in[c] : in[r * cols + c];  // in[c] is row 0, column c
}
"""

_ext = load_inline(
    name="kbench_agent_masked_broadcast_cpu",
    cpp_sources=_CPP,
    functions=["masked_broadcast_row0"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.register_buffer("mask", torch.arange(dim) % 3 != 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.masked_broadcast_row0(x, self.mask)
