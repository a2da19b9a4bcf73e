"""Elementwise GELU with the tanh approximation (nn.GELU(approximate="tanh")).

out = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) over a 4096 x 8192 fp32 tensor.
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gelu = nn.GELU(approximate="tanh")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gelu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
