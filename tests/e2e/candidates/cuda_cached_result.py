"""Test candidate for problems/level1/1_relu.py (GPU): computes once per input shape and then
returns the cached result (docs/integrity.md, exploit class 10). Correct on the correctness trials, which are
the first call for each model; wrong on timed calls with fresh inputs, every one of which kbench checks."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = tuple(x.shape)
        if key not in self.cache:
            self.cache[key] = torch.relu(x)
        return self.cache[key]
