"""Stand-in for `litellm` (see openai.py beside it): imported by `kernelbench.utils` for
generation only, never called by KernelBench's evaluation."""


def completion(*args, **kwargs):
    raise RuntimeError("bench/throughput: litellm is not available; only KernelBench's eval is run")
