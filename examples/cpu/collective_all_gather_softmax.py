"""Candidate for problems/collectives/2_all_gather_softmax.py on the CPU (gloo).

torch.distributed gathers the rows; the scaling and the row softmax are one C++ pass per row.
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

from kernelbench.distributed_collectives import get_world_size, is_distributed_run

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor scaled_softmax(torch::Tensor x, torch::Tensor scale) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "x: contiguous float32");
    const int64_t rows = x.size(0), dim = x.size(1);
    auto out = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    const float* s = scale.data_ptr<float>();
    float* o = out.data_ptr<float>();
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = in + r * dim;
        float* dst = o + r * dim;
        float peak = -INFINITY;
        for (int64_t c = 0; c < dim; ++c) peak = std::max(peak, row[c] * s[c]);
        double sum = 0.0;
        for (int64_t c = 0; c < dim; ++c) {
            dst[c] = std::exp(row[c] * s[c] - peak);
            sum += dst[c];
        }
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t c = 0; c < dim; ++c) dst[c] *= inv;
    }
    return out;
}
"""

_ext = load_inline(
    name="kbench_cpu_collective_all_gather",
    cpp_sources=_CPP,
    functions=["scaled_softmax"],
    extra_cflags=["-O3", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(dim) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        if is_distributed_run():
            gathered = torch.empty((get_world_size() * x.shape[0], x.shape[1]), dtype=x.dtype)
            dist.all_gather_into_tensor(gathered, x)
        else:
            gathered = x
        return _ext.scaled_softmax(gathered, self.scale.contiguous())
