"""Test fixture: the output is a function of the weights only; every seed gives the same answer,
so a candidate could return a memorised tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(32, 48))

    def forward(self, x):
        return self.table * 2.0 + 0.0 * x.sum()


def get_inputs():
    return [torch.randn(16, 16)]


def get_init_inputs():
    return []
