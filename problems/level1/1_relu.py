"""Elementwise ReLU: out = max(x, 0).

A bandwidth-bound op: 4096 x 8192 fp32 in and out (256 MiB of traffic).
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
