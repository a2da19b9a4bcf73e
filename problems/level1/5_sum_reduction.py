"""Sum reduction over dimension 1 with keepdim=True.

x has shape (16, 4096, 1024); the output has shape (16, 1, 1024). Inputs are uniform in [0, 1),
so the sums (about 2048) are far from 0 and any fp32 summation order meets the 1e-4 tolerance.
"""

import torch
import torch.nn as nn

BATCH = 16
DIM1 = 4096
DIM2 = 1024
REDUCE_DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.rand(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [REDUCE_DIM]
