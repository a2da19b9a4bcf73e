"""Test fixture: get_inputs() makes its tensors on `cuda` itself, as KernelBench's examples do
(`torch.randn(...).cuda()`, `device="cuda"`); with --device cpu there is no GPU to make them on."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return torch.relu(x) + y


def get_inputs():
    return [torch.randn(64, 32).cuda(), torch.randn(64, 32, device="cuda")]


def get_init_inputs():
    return []
