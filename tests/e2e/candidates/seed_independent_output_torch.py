"""Test fixture: candidate for tests/e2e/problems/seed_independent_output.py in plain torch."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(32, 48))

    def forward(self, x):
        return self.table.mul(2.0)
