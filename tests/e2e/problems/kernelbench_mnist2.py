# Fixture: the reference of KernelBench's partial-replacement few-shot example, verbatim below
# this header. Source: github.com/ScalingIntelligence/KernelBench, commit 423217d9fda91e0c2d67e4a43bf62f96f6d104f1,
# src/kernelbench/prompts/few_shot/model_ex_mnist2.py (MIT licence). Its get_inputs() puts the
# input on the GPU itself, so it is a GPU-only problem (tests/gpu/test_cuda_exploits.cpp).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def get_inputs():
    # randomly generate input tensors based on the model architecture
    x = torch.randn(1, 1, 28, 28).cuda()
    return [x]


def get_init_inputs():
    # randomly generate tensors required for initialization based on the model architecture
    return []