"""A client for `kbench serve`, the evaluation service (docs/service.md). Standard library only.

    from kbench_client import evaluate
    answer = evaluate("problem.py", "candidate.py", url="http://127.0.0.1:8080",
                      reward="kevin", device="cuda")
    answer["result"]["status"], answer["reward"]["value"]
"""

from .client import Client, KbenchServiceError, evaluate, evaluate_many

__all__ = ["Client", "KbenchServiceError", "evaluate", "evaluate_many"]
