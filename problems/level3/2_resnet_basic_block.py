"""ResNet basic block: conv3x3-BN-ReLU-conv3x3-BN, plus the identity, then ReLU.

Input (32, 64, 56, 56); BatchNorm2d is left in its default training mode, so it normalises with
the batch statistics (and updates its running statistics as a side effect).
"""

import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 64
HEIGHT = 56
WIDTH = 56


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
