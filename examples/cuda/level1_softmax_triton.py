"""Candidate for problems/level1/3_softmax.py: a Triton kernel, one program per row, the row held in registers.

The row (8192 fp32 values) fits one block: the program loads it once, subtracts the row's
maximum, exponentiates, divides by the sum and stores, so each element is read and written once.
Out-of-range lanes load -inf, which adds exp(-inf) = 0 to the sum. kbench must pass it: the
kernel is the candidate's own (a `@triton.jit` function), launched on the caller's stream.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    shifted = x - tl.max(x, axis=0)
    numerator = tl.exp(shifted)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // x.shape[-1] if x.numel() else 0
        x2 = x.contiguous().view(rows, x.shape[-1])
        out = torch.empty_like(x2)
        if rows == 0 or x2.shape[1] == 0:
            return out.view(x.shape)
        block = triton.next_power_of_2(x2.shape[1])
        # Wide rows want more warps to keep the row in registers without spilling.
        warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
        softmax_row_kernel[(rows,)](x2, out, x2.stride(0), out.stride(0), x2.shape[1], BLOCK=block, num_warps=warps)
        return out.view(x.shape)
