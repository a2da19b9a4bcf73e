"""Test fixture: get_inputs returns a dict, which no harness can pass to forward."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return {"x": torch.randn(4)}


def get_init_inputs():
    return []
