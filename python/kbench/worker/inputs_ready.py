"""The hand-over of each trial's inputs from R to C while R is still running (the candidate's
trials start on R's inputs before R's forwards are done: docs/architecture.md, "Processes").
R marks a trial's inputs complete with an empty `trial_<k>.ready` file beside them, after both
of its files are written; kbench marks the trials it took from the reference cache, and writes
`reference.failed` when R stops without finishing. C waits for the mark before it reads a
trial's inputs. C cannot forge a mark: it may not write the inputs directory."""

import time
from pathlib import Path

from .errors import PhaseError

FAILED = "reference.failed"


def ready_path(inputs_dir: Path, index: int) -> Path:
    return Path(inputs_dir) / f"trial_{index}.ready"


def mark_ready(inputs_dir: Path, index: int) -> None:
    ready_path(inputs_dir, index).touch()


def wait_ready(inputs_dir: Path, index: int) -> None:
    """Returns once trial `index`'s inputs are complete. The orchestrator's deadline on C's
    request bounds the wait; R's failure ends it at once."""
    mark, failed = ready_path(inputs_dir, index), Path(inputs_dir) / FAILED
    pause = 0.0005
    while not mark.exists():
        if failed.exists():
            raise PhaseError(
                "harness_error",
                f"the reference stopped before trial {index}'s inputs were ready; its own error is the evaluation's",
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
