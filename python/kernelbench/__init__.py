"""The `kernelbench` names that KernelBench and PopcornBench problems import, provided by kbench.

Problems load unmodified: `from kernelbench.distributed_collectives import default_device`
resolves here, and `kernelbench.popcorn_random_inputs` is the module that PopcornBench injects
into a problem's namespace as `popcorn_pri`.
"""
