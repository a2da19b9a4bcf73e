"""A wrong candidate for tests/e2e/problems/stochastic_step.py: the same computation, but it
draws the uniforms before the proposal noise, so under the same forward seed it gets other
numbers than the reference and must be graded incorrect."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def forward(self, x):
        u = torch.rand(x.shape[0], 1, device=x.device, dtype=x.dtype)
        proposal = x + self.step * torch.randn_like(x)
        log_ratio = 0.5 * (x * x - proposal * proposal).sum(dim=1, keepdim=True)
        return torch.where(torch.log(u) < log_ratio, proposal, x)
