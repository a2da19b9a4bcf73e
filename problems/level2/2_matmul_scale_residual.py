"""Matrix product, scaled, plus a residual: out = (a @ b) * scale + residual.

a is (2048, 2048), b is (2048, 2048), residual is (2048, 2048); scale is a constructor float.
b is scaled by 1/sqrt(K) so a @ b has unit variance and fp32 rounding stays well inside 1e-4.
"""

import torch
import torch.nn as nn

M = 2048
K = 2048
N = 2048
SCALE = 0.5


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, a: torch.Tensor, b: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b) * self.scale + residual


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N) / K**0.5, torch.randn(M, N)]


def get_init_inputs():
    return [SCALE]
