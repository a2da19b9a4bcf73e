"""Broken candidate for problems/level1/1_relu.py: forward crashes the worker process.

forward reads memory at address 0 through ctypes.string_at(0), which kills the process with
SIGSEGV (no compiler needed). kbench must report `crashed` (killed by SIGSEGV) and carry on with
other evaluations; its own processes must survive.
"""

import ctypes

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ctypes.string_at(0)  # dereferences a null pointer: SIGSEGV
        return torch.relu(x)
