"""Rank, world size and device helpers with PopcornBench's names and single-process defaults.

Under kbench the evaluation device comes from KBENCH_DEVICE (set by the worker: "cpu" or
"cuda:N"). Under a launcher (torchrun-style RANK/LOCAL_RANK/WORLD_SIZE variables) the helpers
follow those variables, as PopcornBench's do.
"""

import os

__all__ = [
    "is_distributed_run",
    "maybe_init_process_group",
    "get_rank",
    "get_local_rank",
    "get_world_size",
    "default_device",
]


def is_distributed_run() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def get_rank() -> int:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return int(os.environ.get("RANK", "0"))


def get_local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", "0"))


def get_world_size() -> int:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return int(os.environ.get("WORLD_SIZE", "1"))


def maybe_init_process_group() -> bool:
    """Initialise the default process group when launched with several ranks.

    NCCL on CUDA devices, gloo otherwise. Returns True when a group exists afterwards.
    """
    import torch
    import torch.distributed as dist

    if not is_distributed_run() or not dist.is_available():
        return False
    if dist.is_initialized():
        return True
    backend = "nccl" if default_device().type == "cuda" else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(default_device())
    dist.init_process_group(backend=backend)
    return True


def default_device():
    import torch

    configured = os.environ.get("KBENCH_DEVICE")
    if configured:
        if configured.startswith("cuda") and is_distributed_run():
            return torch.device(f"cuda:{get_local_rank()}")
        return torch.device(configured)
    if torch.cuda.is_available():
        return torch.device(f"cuda:{get_local_rank()}" if is_distributed_run() else "cuda:0")
    return torch.device("cpu")
