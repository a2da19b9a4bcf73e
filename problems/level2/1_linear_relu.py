"""Fully connected layer followed by ReLU: out = relu(x @ W^T + b).

x is (1024, 4096); nn.Linear(4096, 4096) holds W and b.
"""

import torch
import torch.nn as nn

BATCH = 1024
IN_FEATURES = 4096
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
