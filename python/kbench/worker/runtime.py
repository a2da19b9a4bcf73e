"""Process-wide settings of a worker: the device, seeding and numerics."""

import os
import random

import torch


def set_seed(seed: int) -> None:
    torch.manual_seed(seed)  # seeds CUDA too
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed % (2**32))
    except ImportError:
        pass


def configure_device(device: str) -> torch.device:
    """Selects the evaluation device and fixes the numerics both sides run under.

    TF32 is off: with it on, cuDNN convolutions and matmuls of an fp32 reference round to
    10-bit mantissas and no exact fp32 kernel would pass a 1e-4 tolerance.
    """
    os.environ["KBENCH_DEVICE"] = device
    dev = torch.device(device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            from .errors import PhaseError

            raise PhaseError("unsupported", "the worker sees no CUDA device (torch.cuda.is_available() is False)")
        torch.cuda.set_device(dev)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return dev


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
