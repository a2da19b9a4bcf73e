"""Broken candidate for problems/level1/1_relu.py: ModelNew.__init__ needs an argument the problem never gives.

The problem's get_init_inputs() is [], but __init__ requires `negative_slope`. kbench must report
`runtime_error` saying that ModelNew.__init__'s signature cannot take the 0 arguments passed.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, negative_slope):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
