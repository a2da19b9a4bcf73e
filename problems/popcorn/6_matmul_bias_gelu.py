"""Linear layer (matmul plus bias) followed by exact (erf) GELU: out = gelu(x @ W^T + b).

x is (M, 4096) with M jittered around 2048; nn.Linear(4096, 4096) is fixed.
"""

import torch
import torch.nn as nn

from kernelbench.distributed_collectives import default_device

# `popcorn_pri` is injected into this module's namespace by the harness (not imported).

M = 2048
K = 4096
N = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gelu = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gelu(self.linear(x))


def get_inputs():
    m = popcorn_pri.jitter_int(M)  # noqa: F821
    return [torch.randn(m, K, device=default_device())]


def get_init_inputs():
    return [K, N]
