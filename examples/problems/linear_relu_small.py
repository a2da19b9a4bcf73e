"""A CPU-sized linear layer with a ReLU: out = relu(x @ W^T + b), x (128, 512), nn.Linear(512, 512).

problems/level2/1_linear_relu.py in small (0.07 GFLOP a call instead of 17), so that a C++ loop
runs it in milliseconds on a CI machine's CPU. Rows jitter under the popcorn variant.
"""

import torch
import torch.nn as nn

# `popcorn_pri` is injected into this module's namespace by the harness (not imported).

BATCH = 128
IN_FEATURES = 512
OUT_FEATURES = 512


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(popcorn_pri.jitter_int(BATCH), IN_FEATURES)]  # noqa: F821


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
