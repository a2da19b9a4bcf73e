"""Turning exceptions into answers the orchestrator can classify and a person can act on."""

import re
import traceback

# CUDA errors after which the context is unusable: the worker reports them and exits.
_STICKY_CUDA_ERRORS = (
    "illegal memory access",
    "misaligned address",
    "unspecified launch failure",
    "illegal instruction",
    "device-side assert",
    "hardware stack error",
    "invalid program counter",
    "an illegal instruction was encountered",
    "uncorrectable ECC error",
    "launch timed out",
)


class PhaseError(Exception):
    """An error with a kbench status attached ("compile_error", "runtime_error", ...)."""

    def __init__(self, status, message, *, details=None, fatal=False):
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details or {}
        self.fatal = fatal

    def to_answer(self):
        answer = {"ok": False, "status": self.status, "message": self.message, "fatal": self.fatal}
        answer.update(self.details)
        return answer


def is_sticky_cuda_error(exc) -> bool:
    text = str(exc)
    return any(marker in text for marker in _STICKY_CUDA_ERRORS)


def cuda_error_text(exc) -> str:
    """The CUDA error line of an exception message ("CUDA error: an illegal memory access ...")."""
    for line in str(exc).splitlines():
        if "CUDA error" in line or any(marker in line for marker in _STICKY_CUDA_ERRORS):
            return line.strip()
    return str(exc).splitlines()[0].strip() if str(exc) else type(exc).__name__


def format_traceback(exc, limit_chars=20000) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if len(text) > limit_chars:
        text = text[: limit_chars // 2] + "\n[... traceback shortened ...]\n" + text[-limit_chars // 2 :]
    return text


def one_line(exc) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def user_frame(exc, path):
    """The last traceback line inside `path` as (line number, source line), or None."""
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == str(path):
            found = (frame.lineno, (frame.line or "").strip())
    return found


# nvcc and g++ write "file:line:col: error: ..." or "fatal error: ..."; torch's own wrapper
# line ("Error building extension ...") is not a compiler error and is skipped.
_COMPILER_ERROR = re.compile(r"(^|\s)(fatal )?error[:\s]|: error\b")


def first_compiler_error(log: str) -> str:
    """The first line of a build log that reports an error (nvcc, g++, ninja), else ''."""
    for line in log.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("FAILED:", "ninja:", "Error building extension")):
            continue
        if _COMPILER_ERROR.search(stripped):
            return stripped
    return ""
