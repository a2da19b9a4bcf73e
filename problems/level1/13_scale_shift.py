"""Elementwise affine map with scalar constructor arguments: out = x * scale + shift.

x has shape (4096, 8192); scale and shift are Python floats given to the constructor.
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192
SCALE = 1.75
SHIFT = -0.5


class Model(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale + self.shift


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [SCALE, SHIFT]
