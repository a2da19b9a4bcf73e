"""Test fixture: a small Linear + ReLU, so that a candidate in the torch-free kernel format must
read the Model's parameters (passed after the forward arguments, in state_dict order)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(16, 64)]


def get_init_inputs():
    return [64, 32]
