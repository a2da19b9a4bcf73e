"""Test candidate for problems/level1/1_relu.py (GPU): the ReLU runs on a stream of its own that
the caller's stream never waits on (docs/integrity.md, exploit class 6). Event timing on the caller's
stream sees almost nothing; kbench's CUPTI timing sees the work and flags it."""

import torch
import torch.nn as nn

_side = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        global _side
        if _side is None:
            _side = torch.cuda.Stream()
        out = torch.empty_like(x)
        _side.wait_stream(torch.cuda.current_stream())  # inputs ready; the caller is never told
        with torch.cuda.stream(_side):
            torch.clamp(x, min=0.0, out=out)
        return out
