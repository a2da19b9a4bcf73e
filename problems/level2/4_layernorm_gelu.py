"""LayerNorm over the last dimension (affine) followed by exact (erf) GELU.

x is (8192, 4096); nn.LayerNorm(4096) then nn.GELU().
"""

import torch
import torch.nn as nn

BATCH = 8192
DIM = 4096


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.gelu = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gelu(self.ln(x))


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DIM]
