"""Test fixture: inputs, a constructor tensor and an output of 32 MiB each, far above the workers'
file-size limit as tests/e2e/test_transfer.cpp lowers it (KBENCH_WORKER_FSIZE_BYTES), so that
they pass between the processes only through the transfer channel (docs/architecture.md)."""

import torch
import torch.nn as nn

N = 8 * 1024 * 1024  # float32 elements: 32 MiB


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.register_buffer("scale", scale)

    def forward(self, x, y):
        return x * self.scale + y


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return [torch.randn(N)]
