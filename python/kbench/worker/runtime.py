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


def seed_forward(forward_seed: int) -> None:
    """Seeds the generators again immediately before a forward call, in R and in C alike, with
    the call's forward seed (PopcornBench's rule, src/core/seeding.hpp: the trial's seed + 1,
    mod 2^32): a forward that samples noise (torch.randn_like, torch.rand, dropout) then draws
    the same numbers on both sides. torch.manual_seed seeds every CUDA device too, which
    covers PopcornBench's torch.cuda.manual_seed of the current one."""
    set_seed(forward_seed)


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

            raise PhaseError("unsupported", "the worker sees no CUDA device (torch.cuda.is_available() is False"
                             f"{_cuda_init_error()}; CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r})")
        torch.cuda.set_device(dev)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    join_ranks(dev)
    return dev


def _cuda_init_error() -> str:
    """Why CUDA did not initialise, in the driver's words, for the message."""
    try:
        torch.cuda.init()
    except Exception as exc:  # noqa: BLE001 - whatever it is, the person needs to read it
        return f": {exc}"
    return ""


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def join_ranks(dev: torch.device) -> None:
    """Joins the ranks' default process group (the orchestrator set torchrun's variables) before
    any problem or candidate code runs, so that `maybe_init_process_group()` in a problem finds
    it. NCCL on GPUs, gloo on the CPU. The timeout is short: a rank that never arrives has died,
    and the orchestrator reports that rank."""
    if world_size() <= 1:
        return
    import datetime

    import torch.distributed as dist

    if dist.is_initialized():
        return
    options = {"device_id": dev} if dev.type == "cuda" else {}
    dist.init_process_group(
        backend="nccl" if dev.type == "cuda" else "gloo",
        timeout=datetime.timedelta(seconds=int(os.environ.get("KBENCH_RENDEZVOUS_TIMEOUT_S", "120"))),
        **options,
    )


def barrier(dev: torch.device) -> None:
    import torch.distributed as dist

    if dev.type == "cuda":
        dist.barrier(device_ids=[dev.index])
    else:
        dist.barrier()


PRECISIONS = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def precision_dtype(name: str) -> torch.dtype:
    """KernelBench's precision modes: the model and every floating-point input are cast."""
    if name not in PRECISIONS:
        from .errors import PhaseError

        raise PhaseError("harness_error", f"unknown precision {name!r}; expected fp32, fp16 or bf16")
    return PRECISIONS[name]


def cast_inputs(values, device, dtype):
    """Moves tensors to `device`; floating-point ones also take the precision's dtype."""
    out = []
    for value in values:
        if isinstance(value, torch.Tensor):
            value = value.to(device=device, dtype=dtype if value.is_floating_point() else None)
        out.append(value)
    return out


# Captured before any candidate code runs: a candidate that replaces torch.cuda.synchronize
# cannot make the harness stop waiting for the GPU.
_synchronize_cuda = torch.cuda.synchronize


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        _synchronize_cuda(device)
