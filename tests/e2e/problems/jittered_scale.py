"""Test fixture: a small jitter-safe PopcornBench-style problem (rows and width jittered)."""

import torch
import torch.nn as nn

from kernelbench.distributed_collectives import default_device

ROWS = 64
COLS = 96


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale


def get_inputs():
    return [torch.randn(popcorn_pri.jitter_int(ROWS), popcorn_pri.jitter_int(COLS), device=default_device())]


def get_init_inputs():
    return [2.5]
