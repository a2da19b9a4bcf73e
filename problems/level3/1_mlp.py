"""Three-layer perceptron: Linear -> ReLU -> Linear -> ReLU -> Linear.

x is (1024, 2048); layer widths 2048 -> 4096 -> 4096 -> 1024.
"""

import torch
import torch.nn as nn

BATCH = 1024
INPUT_SIZE = 2048
HIDDEN_SIZES = [4096, 4096]
OUTPUT_SIZE = 1024


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_sizes: list, output_size: int):
        super().__init__()
        layers = []
        current = input_size
        for hidden in hidden_sizes:
            layers.append(nn.Linear(current, hidden))
            layers.append(nn.ReLU())
            current = hidden
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZES, OUTPUT_SIZE]
