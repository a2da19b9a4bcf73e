"""An honest ReLU in plain torch, for tests that need a correct candidate without a build."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
