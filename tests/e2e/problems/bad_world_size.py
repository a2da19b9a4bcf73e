"""Test fixture: a KBENCH_WORLD_SIZE that is not an integer literal."""

import torch
import torch.nn as nn

KBENCH_WORLD_SIZE = "two"


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(8)]


def get_init_inputs():
    return []
