"""Test fixture: a wrong ReLU (+1) for problems/level1/1_relu.py, built as an extension named `my_ext`.

Its twin (same_extension_name_a/b.py) builds a different kernel under the same name: kbench's
build directories are keyed by source, so neither can load the other's library.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu_kernel(torch::Tensor input) {
  auto x_t = input.contiguous();
  auto out = torch::empty_like(x_t);
  const float* x = x_t.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t n = x_t.numel();
  for (int64_t i = 0; i < n; ++i) {
    o[i] = x[i] > 0.f ? x[i] + 1.f : 1.f;
  }
  return out;
}
"""

_ext = load_inline(name="my_ext", cpp_sources=_SOURCE, functions=["relu_kernel"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu_kernel(x)
