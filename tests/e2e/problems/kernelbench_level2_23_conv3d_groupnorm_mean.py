"""Test fixture: KernelBench level2/23_Conv3d_GroupNorm_Mean.py, unmodified below this comment.
Source: https://github.com/ScalingIntelligence/KernelBench, KernelBench/level2/23_Conv3d_GroupNorm_Mean.py
at commit 423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (2026-03-05). The mean over every non-batch
dimension of a GroupNorm output is 0 up to rounding: the outputs are about 1e-9 everywhere, so
zeros pass the fp32 tolerance (kbench issue 14: a kernel for it came back `ok` at 106x)."""

import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Model that performs a 3D convolution, applies Group Normalization, computes the mean
    """
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super(Model, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_channels, D, H, W).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, 1).
        """
        x = self.conv(x)
        x = self.group_norm(x)
        x = x.mean(dim=[1, 2, 3, 4]) # Compute mean across all dimensions except batch
        return x

batch_size = 128
in_channels = 3
out_channels = 24
D, H, W = 24, 32, 32
kernel_size = 3
num_groups = 8

def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]