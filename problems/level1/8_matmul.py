"""Square fp32 matrix multiplication: C = A @ B with A and B of shape (2048, 2048).

B is scaled by 1/sqrt(N) so C has unit variance: then the rounding error of any fp32 summation
order (about 1e-5 here) stays well inside the 1e-4 absolute tolerance, also where C is near 0.
"""

import torch
import torch.nn as nn

N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N) / N**0.5]


def get_init_inputs():
    return []
