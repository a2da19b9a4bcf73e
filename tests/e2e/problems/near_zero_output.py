"""Test fixture: KernelBench issue #165 in small. A softmax over 200000 columns gives outputs of
about 5e-6, far below the fp32 tolerance, so an all-zeros answer passes."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.rand(4, 200000)]


def get_init_inputs():
    return []
