"""Linear layer, sigmoid, then a sum over each row: out = sigmoid(x @ W^T + b).sum(1, keepdim=True).

x is (1024, 4096); nn.Linear(4096, 4096); the output is (1024, 1).
"""

import torch
import torch.nn as nn

BATCH = 1024
IN_FEATURES = 4096
HIDDEN = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        self.linear = nn.Linear(in_features, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.linear(x)).sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN]
