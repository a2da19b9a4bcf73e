"""Test fixture: a Metropolis-style step whose forward samples noise (torch.randn_like for the
proposal, torch.rand for the acceptance), as PopcornBench's MCMC problems do. Two calls agree
only when torch's generators are seeded again before each, which kbench does before every
forward (docs/problems.md, "Stochastic problems")."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def forward(self, x):
        proposal = x + self.step * torch.randn_like(x)
        log_ratio = 0.5 * (x * x - proposal * proposal).sum(dim=1, keepdim=True)
        u = torch.rand(x.shape[0], 1, device=x.device, dtype=x.dtype)
        return torch.where(torch.log(u) < log_ratio, proposal, x)


def get_inputs():
    return [torch.randn(64, 32)]


def get_init_inputs():
    return [0.5]
