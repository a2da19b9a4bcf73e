"""Test fixture: the softmax over 200,000 columns of kbench issue 14. With randn inputs about 47
elements per row (those with x above about 3.5) exceed the fp32 atol of 1e-4, so all zeros fail,
but the other 99.98 % lie within atol of 0: the tolerance grades almost nothing of them
(`kbench problems check` warns `mostly-below-atol`)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(4, 200000)]


def get_init_inputs():
    return []
