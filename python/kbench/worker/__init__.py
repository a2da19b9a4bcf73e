"""The phases of one evaluation, as run inside kbench-worker.

The C++ worker reads one JSON request per line and calls `handlers.handle_line`; the answer
goes back to the orchestrator on the worker's response channel.
"""
