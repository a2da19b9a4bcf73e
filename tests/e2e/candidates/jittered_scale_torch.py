"""Test fixture: candidate for tests/e2e/problems/jittered_scale.py in plain torch (no build),
so the popcorn pipeline is tested without a compiler in the loop."""

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x.mul(self.scale)
