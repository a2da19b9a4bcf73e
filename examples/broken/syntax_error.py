"""Broken candidate for problems/level1/1_relu.py: a Python syntax error on line 16.

`def forward(self, x)` lacks its colon. kbench must report `compile_error` with
"syntax_error.py:16: SyntaxError: ..." (the file and line 16).
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    # The next line is line 16.
    def forward(self, x)
        return torch.relu(x)
