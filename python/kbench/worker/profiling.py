"""The worker's half of `kbench eval --profile`: this worker runs under Nsight Compute, started
with --profile-from-start off, so that only the call made here between cudaProfilerStart and
cudaProfilerStop is profiled (not the imports, the build, the trials or the warm-up)."""

import torch

from . import runtime
from .own_kernels import own_kernel_names


def profile(session, request):
    model, inputs = session.kept
    with torch.no_grad():
        for _ in range(int(request.get("warmup", 2))):
            model(*inputs)
        runtime.synchronize(session.device)
        torch.cuda.profiler.start()
        try:
            model(*inputs)
            runtime.synchronize(session.device)
        finally:
            torch.cuda.profiler.stop()
    return {"ok": True, "own_kernels": own_kernel_names(getattr(session, "path", None))}
