"""Test fixture: a reference whose forward never returns. Its check runs into --run-timeout and
is `not checked`; in a batch (`kbench problems check --jobs`), the other problems' checks are
unaffected."""

import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        while True:
            time.sleep(1)


def get_inputs():
    return [torch.randn(8, 8)]


def get_init_inputs():
    return []
