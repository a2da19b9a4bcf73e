"""Test fixture: every row of the output is the same (a mean over the batch broadcast back), so
a kernel that computes one row and copies it is graded on one row's worth of work."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.mean(dim=0, keepdim=True).expand_as(x).contiguous()


def get_inputs():
    return [torch.randn(64, 128)]


def get_init_inputs():
    return []
