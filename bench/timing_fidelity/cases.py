"""The kernels the fidelity benchmark times, each a zero-argument call on the GPU.

Sizes target an H200 (4.8 TB/s): a launch-bound tiny kernel (the seed's 18x44 masked
broadcast), elementwise negations of about 20 µs, 200 µs and 2 ms, a compute-bound fp16 matmul, and a ReLU
that runs on a side stream the caller never waits on."""

import torch


def make_cases(device):
    """{name: call}, and {name: redraw}: what refills the call's inputs in place with fresh
    random data before each timed call, as kbench's timing loop draws a fresh input set for
    every call (python/kbench/worker/timed_inputs.py), so that the draw's dirty lines are in the
    L2 when the flush runs."""
    cases, redraws = {}, {}

    x = torch.randn(18, 44, device=device)
    mask = torch.rand(18, 44, device=device) > 0.5
    cases["tiny_masked_broadcast_18x44"] = lambda: x[:1].expand(18, 44) * mask
    redraws["tiny_masked_broadcast_18x44"] = lambda: (x.normal_(), mask.copy_(torch.rand_like(x) > 0.5))

    # Elementwise kernels, not copy_: a same-dtype copy is a cudaMemcpy, which ncu does not profile.
    for label, n in (("negate_20us", 12_000_000), ("negate_200us", 120_000_000), ("negate_2ms", 1_200_000_000)):
        src = torch.randn(n, device=device)
        dst = torch.empty_like(src)
        cases[label] = (lambda s, d: (lambda: torch.neg(s, out=d)))(src, dst)
        redraws[label] = src.normal_

    a = torch.randn(8192, 8192, device=device, dtype=torch.float16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.float16)
    cases["matmul_fp16_8192"] = lambda: a @ b
    redraws["matmul_fp16_8192"] = lambda: (a.normal_(), b.normal_())

    side = torch.cuda.Stream(device=device)
    big = torch.randn(120_000_000, device=device)
    out = torch.empty_like(big)

    def relu_on_side_stream():
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            torch.clamp(big, min=0.0, out=out)
        return out

    cases["relu_unjoined_side_stream_200us"] = relu_on_side_stream
    redraws["relu_unjoined_side_stream_200us"] = big.normal_
    return cases, redraws
