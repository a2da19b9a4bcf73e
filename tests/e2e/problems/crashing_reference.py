"""Test fixture: a reference whose process dies in forward (SIGKILL to itself, as an out-of-memory
kill or a segfault in an extension would end it). Its check is `not checked`; in a batch
(`kbench problems check --jobs`), the other problems' checks are unaffected."""

import os
import signal

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        os.kill(os.getpid(), signal.SIGKILL)
        return x


def get_inputs():
    return [torch.randn(8, 8)]


def get_init_inputs():
    return []
