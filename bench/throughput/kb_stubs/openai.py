"""Stand-in for the `openai` package, which KernelBench's `kernelbench.utils` imports at module
level for generating kernels with a model. bench/throughput only calls KernelBench's evaluation
(`kernelbench.eval`), which never touches it; a call fails loudly rather than silently."""


class OpenAI:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("bench/throughput: openai is not available; only KernelBench's eval is run")
