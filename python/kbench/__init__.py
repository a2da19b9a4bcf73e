"""kbench's Python side: what runs inside kbench-worker (the embedded interpreter).

`kbench.worker` holds the phases (compile, reference, candidate, timing) that the C++
orchestrator drives over the worker protocol; problems never import it.
"""
