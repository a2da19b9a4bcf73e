"""Broken candidate for problems/level1/1_relu.py: the class is misspelt ModelNw, no ModelNew.

kbench must refuse it: `static_rejected` by the modelnew-defined rule (the message names the
class it did find, ModelNw); with static checks off, loading it must give `runtime_error` saying
that the candidate defines no class ModelNew.
"""

import torch
import torch.nn as nn


class ModelNw(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
