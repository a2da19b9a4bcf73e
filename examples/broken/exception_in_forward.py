"""Broken candidate for problems/level1/1_relu.py: forward raises an exception.

Loading and construction succeed; forward raises RuntimeError("kernel failed: ..."). kbench must
report `runtime_error`, naming this file's line that raised and the exception's message.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("kernel failed: simulated launch failure (examples/broken/exception_in_forward.py)")
