"""Broken candidate for problems/level1/1_relu.py: it imports a module that does not exist.

`import kbench_nonexistent_fast_relu` raises ModuleNotFoundError while the candidate loads. kbench
must report `compile_error` (the candidate failed while loading), naming this file, the import's
line and the missing module.
"""

import torch
import torch.nn as nn

import kbench_nonexistent_fast_relu  # noqa: F401  (no such module)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return kbench_nonexistent_fast_relu.relu(x)
