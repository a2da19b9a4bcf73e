"""Test fixture: the weights come from a generator seeded with the clock, not from torch's global
generator, so two models built under the same seed differ and no candidate can reproduce them."""

import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        own = torch.Generator().manual_seed(time.perf_counter_ns())
        self.weight = nn.Parameter(torch.randn(24, 24, generator=own))

    def forward(self, x):
        return x @ self.weight


def get_inputs():
    return [torch.randn(8, 24)]


def get_init_inputs():
    return []
