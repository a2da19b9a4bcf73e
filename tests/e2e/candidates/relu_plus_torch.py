"""An honest candidate for tests/e2e/problems/inputs_made_on_cuda.py, in plain torch."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return torch.relu(x) + y
