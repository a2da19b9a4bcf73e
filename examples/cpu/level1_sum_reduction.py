"""Candidate for problems/level1/5_sum_reduction.py: sum over one dim (keepdim) in C++.

Views x as (outer, reduced, inner), accumulates each output in double, walking the reduced dim
with unit-stride inner rows so memory is read sequentially.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor sum_dim_keepdim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.device().is_cpu(), "sum_dim_keepdim: x must be a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "sum_dim_keepdim: x must be float32");
    TORCH_CHECK(x.is_contiguous(), "sum_dim_keepdim: x must be contiguous");
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "sum_dim_keepdim: dim out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= x.size(d);
    const int64_t len = x.size(dim);
    std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end());
    out_sizes[dim] = 1;
    auto out = torch::empty(out_sizes, x.options());
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t a = 0; a < outer; ++a) {
        std::vector<double> acc(inner, 0.0);
        const float* base = in + a * len * inner;
        for (int64_t r = 0; r < len; ++r) {
            const float* row = base + r * inner;
            for (int64_t i = 0; i < inner; ++i) acc[i] += row[i];
        }
        for (int64_t i = 0; i < inner; ++i) o[a * inner + i] = static_cast<float>(acc[i]);
    }
    return out;
}
"""

_ext = load_inline(
    name="kbench_cpu_sum_reduction",
    cpp_sources=_CPP,
    functions=["sum_dim_keepdim"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_dim_keepdim(x.contiguous(), self.dim)
